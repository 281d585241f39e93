#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Parses HTTP dates (RFC 9110, 5.6.7) without a locale-dependent date formatter: the
/// IMF-fixdate servers send (`Sun, 06 Nov 1994 08:49:37 GMT`), and the two obsolete forms
/// recipients must still accept, RFC 850's (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime's
/// (`Sun Nov  6 08:49:37 1994`).
enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longWeekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

    /// The instant an HTTP date names, or nil when the text is not one (or names no real day).
    static func parse(_ text: some StringProtocol) -> Date? {
        let bytes = Array(text.utf8)
        return imfFixdate(bytes) ?? asctime(bytes) ?? rfc850(bytes)
    }

    /// The instant a cookie's `Expires` names, read as RFC 6265 (5.1.1) reads one: the first
    /// time (`H:M:S`), day of the month, month name and year among its tokens, in any order and
    /// with anything around them; a two-digit year 70 to 99 is 19xx, 0 to 69 20xx. Nil when one
    /// is missing or out of range, or the day does not exist.
    ///
    /// libcurl 7.88 reads `01-Jan-70` as 2070 and a year before 1970 as no expiry: a server's
    /// deletion of a cookie by such a date left it in the jar (see ``CookieDeletion``).
    static func parseCookieDate(_ text: some StringProtocol) -> Date? {
        cookieDate(text)?.date
    }

    /// ``parseCookieDate(_:)``'s instant, with the year it read and whether the text gave it in
    /// two digits.
    static func cookieDate(_ text: some StringProtocol) -> (date: Date, year: Int, twoDigitYear: Bool)? {
        var time: (hour: Int, minute: Int, second: Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        // Delimiters: HTAB, SP to "/", ";" to "@", "[" to "`", "{" to "~".
        func isDelimiter(_ byte: UInt8) -> Bool {
            byte == 0x09 || (0x20...0x2F).contains(byte) || (0x3B...0x40).contains(byte)
                || (0x5B...0x60).contains(byte) || (0x7B...0x7E).contains(byte)
        }
        func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
        /// The leading run of 1 to `most` (at least `least`) digits, when no digit follows it.
        func leadingNumber(_ token: ArraySlice<UInt8>, least: Int, most: Int) -> (Int, ArraySlice<UInt8>)? {
            let digits = token.prefix(while: isDigit)
            guard digits.count >= least, digits.count <= most, let value = number(digits) else { return nil }
            return (value, token[digits.endIndex...])
        }
        let bytes = Array(text.utf8)
        for token in bytes.split(whereSeparator: isDelimiter) {
            if time == nil, let (hour, afterHour) = leadingNumber(token, least: 1, most: 2),
                afterHour.first == UInt8(ascii: ":"),
                let (minute, afterMinute) = leadingNumber(afterHour.dropFirst(), least: 1, most: 2),
                afterMinute.first == UInt8(ascii: ":"),
                let (second, _) = leadingNumber(afterMinute.dropFirst(), least: 1, most: 2)
            {
                time = (hour, minute, second)
            } else if day == nil, let (value, rest) = leadingNumber(token, least: 1, most: 2),
                rest.first.map({ !isDigit($0) }) ?? true
            {
                day = value
            } else if month == nil, token.count >= 3,
                let found = months.firstIndex(where: { name in
                    zip(name.utf8, token.prefix(3)).allSatisfy { $0 | 0x20 == $1 | 0x20 }
                })
            {
                month = found + 1
            } else if year == nil, let (value, rest) = leadingNumber(token, least: 2, most: 4),
                rest.first.map({ !isDigit($0) }) ?? true
            {
                year = value
            }
        }
        guard let time, let day, let month, var year else { return nil }
        let twoDigitYear = year < 100
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard year >= 1601, time.hour <= 23, time.minute <= 59, time.second <= 59, day >= 1,
            day <= daysInMonth(month, year: year)
        else { return nil }
        let seconds =
            daysSinceEpoch(year: year, month: month, day: day) * 86_400 + time.hour * 3_600 + time.minute * 60
            + time.second
        return (Date(timeIntervalSince1970: TimeInterval(seconds)), year, twoDigitYear)
    }

    /// The instant an IMF-fixdate names, or nil for any other text (the obsolete forms
    /// included): the only form a sender may use, so the only one sent back (`If-Range`).
    static func parseIMFFixdate(_ text: some StringProtocol) -> Date? { imfFixdate(Array(text.utf8)) }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`: fixed width, 29 bytes.
    private static func imfFixdate(_ bytes: [UInt8]) -> Date? {
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == UInt8(ascii: " "),
            bytes[7] == UInt8(ascii: " "), bytes[11] == UInt8(ascii: " "), bytes[16] == UInt8(ascii: " "),
            bytes[25] == UInt8(ascii: " "), text(bytes[26..<29]) == "GMT", weekdays.contains(text(bytes[0..<3])),
            let month = month(bytes[8..<11]), let day = number(bytes[5..<7]), let year = number(bytes[12..<16])
        else { return nil }
        return date(year: year, month: month, day: day, time: bytes[17..<25])
    }

    /// `Sun Nov  6 08:49:37 1994`: fixed width, 24 bytes, the day padded with a space.
    private static func asctime(_ bytes: [UInt8]) -> Date? {
        guard bytes.count == 24, bytes[3] == UInt8(ascii: " "), bytes[7] == UInt8(ascii: " "),
            bytes[10] == UInt8(ascii: " "), bytes[19] == UInt8(ascii: " "), weekdays.contains(text(bytes[0..<3])),
            let month = month(bytes[4..<7]), let year = number(bytes[20..<24])
        else { return nil }
        let day = bytes[8] == UInt8(ascii: " ") ? number(bytes[9..<10]) : number(bytes[8..<10])
        guard let day else { return nil }
        return date(year: year, month: month, day: day, time: bytes[11..<19])
    }

    /// `Sunday, 06-Nov-94 08:49:37 GMT`: a whole weekday, then 24 bytes. The two-digit year is
    /// the one ending so from 49 years back to 50 ahead (RFC 9110: never more than 50 ahead).
    private static func rfc850(_ bytes: [UInt8]) -> Date? {
        guard let comma = bytes.firstIndex(of: UInt8(ascii: ",")), longWeekdays.contains(text(bytes[..<comma])),
            bytes.count == comma + 24
        else { return nil }
        let rest = bytes[(comma + 1)...]
        let at = rest.startIndex
        guard bytes[at] == UInt8(ascii: " "), bytes[at + 3] == UInt8(ascii: "-"), bytes[at + 7] == UInt8(ascii: "-"),
            bytes[at + 10] == UInt8(ascii: " "), bytes[at + 19] == UInt8(ascii: " "),
            text(bytes[(at + 20)...]) == "GMT",
            let month = month(bytes[(at + 4)..<(at + 7)]), let day = number(bytes[(at + 1)..<(at + 3)]),
            let twoDigits = number(bytes[(at + 8)..<(at + 10)])
        else { return nil }
        let thisYear = 1970 + Int(Date().timeIntervalSince1970 / 31_556_952)
        // The year ending so within 49 years back and 50 ahead.
        var year = thisYear - thisYear % 100 + twoDigits
        if year > thisYear + 50 { year -= 100 } else if year < thisYear - 49 { year += 100 }
        return date(year: year, month: month, day: day, time: bytes[(at + 11)..<(at + 19)])
    }

    /// The instant of a day and an `HH:MM:SS` time, or nil for a day or time that does not exist.
    private static func date(year: Int, month: Int, day: Int, time: ArraySlice<UInt8>) -> Date? {
        let at = time.startIndex
        guard time.count == 8, time[at + 2] == UInt8(ascii: ":"), time[at + 5] == UInt8(ascii: ":"),
            let hour = number(time[at..<(at + 2)]), let minute = number(time[(at + 3)..<(at + 5)]),
            let second = number(time[(at + 6)..<(at + 8)]), hour < 24, minute < 60, second <= 60,
            day >= 1, day <= daysInMonth(month, year: year)
        else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    private static func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    /// 1 to 12 for `Jan` to `Dec`.
    private static func month(_ bytes: ArraySlice<UInt8>) -> Int? {
        months.firstIndex(of: text(bytes)).map { $0 + 1 }
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a day of the proleptic Gregorian calendar (H. Hinnant's
    /// `days_from_civil`).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
