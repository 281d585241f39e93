import Foundation
import Testing

@testable import Wattle

@Suite("Merging a session's cookie changes into a jar another session stored")
struct CookieJarMergeTests {
    static let now = Date(timeIntervalSince1970: 2_000_000_000)

    /// A Netscape cookie line for api.test, expiring `expires` seconds after `now` (0: a session cookie).
    static func line(_ name: String, _ value: String, expires: Double = 0) -> String {
        let expiry = expires == 0 ? 0 : Int(now.timeIntervalSince1970 + expires)
        return "api.test\tFALSE\t/\tFALSE\t\(expiry)\t\(name)\t\(value)"
    }

    static func jar(_ lines: String...) -> CookieJarMerge.Jar { CookieJarMerge.Jar(lines, now: now) }

    static func merged(ours: CookieJarMerge.Jar, base: CookieJarMerge.Jar, theirs: CookieJarMerge.Jar) -> [String] {
        CookieJarMerge.merge(ours: ours, base: base, theirs: theirs, now: now).lines
    }

    @Test(
        "a cookie set or changed here replaces the stored one; one unchanged here keeps the stored, newer one; the stored order is kept, new ones last"
    )
    func changes() {
        let base = Self.jar(Self.line("x", "1"), Self.line("y", "1"))
        let ours = Self.jar(Self.line("x", "1"), Self.line("y", "2"), Self.line("n", "1"))
        let theirs = Self.jar(Self.line("t", "1"), Self.line("x", "9"), Self.line("y", "1"))
        #expect(
            Self.merged(ours: ours, base: base, theirs: theirs) == [
                Self.line("t", "1"), Self.line("x", "9"), Self.line("y", "2"), Self.line("n", "1"),
            ])
    }

    @Test(
        "a server's removal here removes the stored cookie whatever its line there; an expiry here does not remove another session's fresh one"
    )
    func removals() {
        let base = Self.jar(Self.line("gone", "1"), Self.line("old", "1", expires: 60), Self.line("keep", "1"))
        let ours = Self.jar(Self.line("keep", "1"))
        let theirs = Self.jar(Self.line("gone", "2"), Self.line("old", "2", expires: 3600), Self.line("keep", "1"))
        // At `now` "old" is live in base: the server removed it here, so it goes.
        #expect(Self.merged(ours: ours, base: base, theirs: theirs) == [Self.line("keep", "1")])
        // Two minutes later base's "old" has expired: not a removal, the stored one stays.
        let later = CookieJarMerge.merge(ours: ours, base: base, theirs: theirs, now: Self.now + 120).lines
        #expect(later == [Self.line("old", "2", expires: 3600), Self.line("keep", "1")])
    }

    @Test(
        "identity is name, domain in any case and with or without a leading dot, path and subdomain flag; expired and unreadable lines are left out"
    )
    func identityAndExpiry() {
        let upper = "API.test\tFALSE\t/\tFALSE\t0\tx\t2"
        let otherPath = "api.test\tFALSE\t/p\tFALSE\t0\tx\t3"
        let theirs = Self.jar(Self.line("x", "1"), otherPath, Self.line("dead", "1", expires: -1), "not a cookie")
        #expect(theirs.lines == [Self.line("x", "1"), otherPath])
        #expect(Self.merged(ours: Self.jar(upper), base: Self.jar(), theirs: theirs) == [upper, otherPath])
        #expect(Self.merged(ours: Self.jar(), base: Self.jar(Self.line("x", "1")), theirs: theirs) == [otherPath])
    }

    @Test("the subdomain flag is part of a cookie's identity; the HttpOnly prefix and a path's trailing slash are not")
    func flags() {
        let host = "api.test\tFALSE\t/\tFALSE\t0\tx\t1"
        let domain = ".api.test\tTRUE\t/\tFALSE\t0\tx\t2"
        let httpOnly = "#HttpOnly_api.test\tFALSE\t/\tFALSE\t0\tx\t3"
        #expect(Self.jar(host, domain).lines == [host, domain])
        #expect(Self.jar(host, httpOnly).lines == [httpOnly])
        // One trailing slash aside, as libcurl compares paths.
        let slashed = "api.test\tFALSE\t/p/\tFALSE\t0\tx\t4"
        #expect(Self.jar("api.test\tFALSE\t/p\tFALSE\t0\tx\t1", slashed).lines == [slashed])
        #expect(
            Self.merged(ours: Self.jar(httpOnly), base: Self.jar(host), theirs: Self.jar(host, domain)) == [
                httpOnly, domain,
            ])
    }
}
