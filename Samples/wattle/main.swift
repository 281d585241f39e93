import Foundation
import Wattle
import WattleDemoServer

func rss() -> Int {
    let text = try! String(contentsOfFile: "/proc/self/statm", encoding: .utf8)
    return Int(text.split(separator: " ")[1])! * 4096 / 1048576
}
let mode = CommandLine.arguments[1]
if mode == "server" {
    let server = try await DemoServer.start()
    print("port", server.port, "rss", rss())
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    p.arguments = ["-s", "-o", "/dev/null", "http://127.0.0.1:\(server.port)/bytes/\(CommandLine.arguments.count > 2 ? CommandLine.arguments[2] : "209715200")"]
    try p.run(); p.waitUntilExit()
    print("after curl download rss", rss())
} else {
    let session = Session(configuration: Configuration { $0.proxy = .none })
    print("rss", rss())
    _ = try await session.download(CommandLine.arguments[2], to: URL(fileURLWithPath: "/tmp/dl.bin"))
    print("after wattle download rss", rss())
}
