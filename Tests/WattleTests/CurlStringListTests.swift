import CCurl
import Testing

@testable import Wattle

@Suite("libcurl string lists are built all or nothing")
struct CurlStringListTests {
    /// The list's lines, in order.
    func lines(_ list: UnsafeMutablePointer<curl_slist>?) -> [String] {
        var lines: [String] = []
        var node = list
        while let current = node {
            lines.append(String(cString: current.pointee.data))
            node = current.pointee.next
        }
        return lines
    }

    @Test("every line in order; none is nil")
    func complete() throws {
        let list = try CurlStringList.make(["Accept: a", "X-Token: t", "Expect:"])
        defer { curl_slist_free_all(list) }
        #expect(lines(list) == ["Accept: a", "X-Token: t", "Expect:"])
        #expect(try CurlStringList.make([String]()) == nil)
    }

    @Test("a line libcurl cannot allocate fails the whole list, and what was built is freed")
    func allocationFailure() {
        var calls = 0
        var built: [String] = []
        #expect(throws: CurlStringList.AllocationFailed.self) {
            _ = try CurlStringList.make(["Authorization: Bearer t", "Accept: a", "X-Later: b"]) { list, line in
                calls += 1
                guard calls < 2 else { return nil }
                let longer = curl_slist_append(list, line)
                built = self.lines(longer)
                return longer
            }
        }
        // It stopped at the failing line: the third was never added to a list missing the second.
        #expect(calls == 2)
        #expect(built == ["Authorization: Bearer t"])
    }
}
