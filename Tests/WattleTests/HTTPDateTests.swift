import Foundation
import Testing

@testable import Wattle

@Suite("HTTP dates (Retry-After) without a locale-dependent formatter")
struct HTTPDateTests {
    /// Foundation's formatter, as the reference the parser must agree with.
    static let reference: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }()

    @Test("agrees with Foundation's formatter on 5,000 instants from 1900 to 2200, leap days included")
    func agreesWithFoundation() {
        var generator = SystemRandomNumberGenerator()
        var instants = (0..<5_000).map { _ in Int.random(in: -2_208_988_800...7_258_118_400, using: &generator) }
        // 1970, 2000-02-29, 2024-02-29, 1900-03-01, 2100-02-28 23:59:59
        instants += [0, 951_782_400, 1_709_164_800, -2_203_891_200, 4_107_542_399]
        for seconds in instants {
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            let text = Self.reference.string(from: date)
            #expect(HTTPDate.parse(text) == date, "\(text)")
        }
    }

    @Test("reads a cookie's Expires as RFC 6265 does: tokens in any order, 70-99 as 19xx, 0-69 as 20xx")
    func cookieDates() {
        func seconds(_ text: String) -> Int? { HTTPDate.parseCookieDate(text).map { Int($0.timeIntervalSince1970) } }
        #expect(seconds("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(seconds("Sunday, 06-Nov-94 08:49:37 GMT") == 784_111_777)
        #expect(seconds("Sun Nov  6 08:49:37 1994") == 784_111_777)
        #expect(seconds("november 6 1994 8:49:37") == 784_111_777)
        // The classic deletion libcurl 7.88 reads as 2070, and the years around it.
        #expect(seconds("Thu, 01-Jan-70 00:00:01 GMT") == 1)
        #expect(seconds("Thu, 01 Jan 1970 00:00:00 GMT") == 0)
        #expect(seconds("Wed, 31-Dec-69 23:59:59 GMT") == 3_155_759_999)  // 2069
        #expect(seconds("Wed, 01 Jan 1969 00:00:01 GMT") == -31_535_999)
        #expect(seconds("Tue, 19 Jan 2038 03:14:08 GMT") == 2_147_483_648)
        for refused in [
            "Sun, 06 Nov 1994", "06 Nov 1994 25:00:00", "Feb 30 2020 00:00:00", "Jan 1 1600 00:00:00", "soon",
            "Sun, 06 Xyz 1994 08:49:37 GMT", "",
        ] {
            #expect(HTTPDate.parseCookieDate(refused) == nil, "\(refused)")
        }
    }

    @Test("refuses what is not an HTTP date or names no real day")
    func refusesMalformed() {
        for text in [
            "", "soon", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun 06 Nov 1994 08:49:37 GMT",
            "Sun, 06-Nov-94 08:49:37 GMT", "Sun Nov 6 08:49:37 1994", "Xyz, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 UTC", "Sunday, 6-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 94",
            "Sun Nov 31 08:49:37 1994", "Funday, 06-Nov-94 08:49:37 GMT", "Sunday 06-Nov-94 08:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 30 Feb 2024 08:49:37 GMT", "Sun, 29 Feb 2100 08:49:37 GMT",
            "Sun, 00 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT",
            "Sun, 06 Nov 19a4 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT ",
        ] {
            #expect(HTTPDate.parse(text) == nil, "\(text)")
        }
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
    }

    @Test("reads the obsolete forms recipients must accept: RFC 850's and asctime's")
    func obsoleteForms() {
        let instant = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == instant)
        #expect(HTTPDate.parse("Sun Nov 16 08:49:37 1994") == instant.addingTimeInterval(10 * 86_400))
        // A two-digit year is the latest one ending so, at most 50 years ahead: 94 is 1994.
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == instant)
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "GMT")!
        let nextYear = utc.component(.year, from: Date()) + 1
        let twoDigits = String(format: "%02d", nextYear % 100)
        let ahead = HTTPDate.parse("Monday, 01-Jan-\(twoDigits) 00:00:00 GMT")
        #expect(
            ahead.map { Int($0.timeIntervalSinceNow) } ?? 0 > 0,
            "a year ahead stays ahead: \(String(describing: ahead))")
        #expect(ahead.map { $0.timeIntervalSinceNow < 2 * 366 * 86_400 } == true)
        // A resumable download's If-Range sends back only an IMF-fixdate (the form senders
        // must use), never an obsolete one.
        let now = "Fri, 27 Nov 2026 10:00:00 GMT"
        #expect(PartialDownload.validator(of: ["Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT", "Date": now]) != nil)
        #expect(PartialDownload.validator(of: ["Last-Modified": "Sunday, 06-Nov-94 08:49:37 GMT", "Date": now]) == nil)
        #expect(PartialDownload.validator(of: ["Last-Modified": "Sun Nov  6 08:49:37 1994", "Date": now]) == nil)
        // Retry-After reads them too.
        #expect(RetryPolicy.parseRetryAfter("Sun Nov  6 08:49:37 1994") == .zero)
    }
}
