import Foundation
import Testing
import Wattle
import WattleDemoServer

@Suite("The in-memory size limit holds for every body kept in memory, and only for those")
struct ResponseSizeTests {
    @Test("HEAD learns the size of a body larger than the limit: libcurl's own check stays off for HEAD")
    func headOfLargeBody() async throws {
        let server = try await Faults.server.value
        let response = try await Faults.session().send(Request(server.url("large-head").absoluteString, method: .head))
        #expect(response.statusCode == 200)
        #expect(response.headers["Content-Length"] == "200000000")
        #expect(response.data.isEmpty)
    }

    @Test(
        "a download's error response keeps its status and at most the limit of its body, with a length or chunked",
        arguments: ["big-error-500", "big-error-500?chunked"])
    func downloadErrorBodyLimited(path: String) async throws {
        let server = try await Faults.server.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("file.bin")
        let limited = Faults.session { $0.maximumResponseSize = 1_000_000 }
        await expectWattleError({ _ = try await limited.download(server.url(path).absoluteString, to: destination) }) {
            if case .httpStatus(let response) = $0 {
                return response.statusCode == 500
                    && response.data == Data(repeating: UInt8(ascii: "e"), count: 1_000_000)
            }
            return false
        }
        // Under the limit, the error carries the whole body, as for any request.
        await expectWattleError({
            _ = try await Faults.session().download(server.url(path).absoluteString, to: destination)
        }) {
            if case .httpStatus(let response) = $0 {
                return response.statusCode == 500 && response.data.count == 3_000_000
            }
            return false
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test(
        "a download whose error response announces 9 EB and sends a byte fails as the connection closes (no crash, no file)"
    )
    func downloadErrorAnnouncingHugeLength() async throws {
        let server = try await Faults.server.value
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("file.bin")
        let url = server.url("huge-length-404").absoluteString
        await expectWattleError({ _ = try await Faults.session().download(url, to: destination) }) {
            if case .connectionLost = $0 { return true }
            return false
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test("with no limit, a body announcing 9 EB reserves little and fails as the connection closes short")
    func unlimitedHugeAnnouncedLength() async throws {
        let server = try await Faults.server.value
        let session = Faults.session()
        let request = TransportRequest(method: .get, url: server.url("huge-length-404"), maximumResponseSize: nil)
        await expectWattleError({ _ = try await session.transport.perform(request) }) {
            if case .connectionLost = $0 { return true }
            return false
        }
    }
}
