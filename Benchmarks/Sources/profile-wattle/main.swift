// N sequential GETs with Wattle, for `valgrind --tool=callgrind`: valgrind 3.19 crashes when a
// thread starts while the main thread waits in `sigsuspend`, which an async `main` does
// (`dispatch_main`), so this main is synchronous and waits on a semaphore instead.
//
//   profile-wattle URL N [h1|h2] [executor]
// Instructions per request: run it with two values of N and divide the difference.
import FoundationEssentials
import Wattle

#if canImport(Glibc)
    import Glibc
#endif

final class Done: @unchecked Sendable {
    var semaphore = sem_t()
    var failures = 0
}

let arguments = CommandLine.arguments
guard arguments.count >= 3, let count = Int(arguments[2]) else {
    print("usage: profile-wattle URL N [h1|h2] [executor]")
    exit(2)
}
let url = arguments[1]
let http2 = arguments.count > 3 && arguments[3] == "h2"
let onNetworkThread = arguments.dropFirst(3).contains("executor")
let session = Session(
    configuration: Configuration {
        $0.proxy = .none
        $0.httpVersion = http2 ? .http2OverTLS : .http1_1
        $0.trust = TrustPolicy(selfSignedHosts: ["127.0.0.1", "localhost"])
    })
let done = Done()
sem_init(&done.semaphore, 0, 0)
Task.detached {
    func loop() async -> Int {
        var failures = 0
        for _ in 0..<count {
            do {
                let response = try await session.get(url)
                if response.statusCode != 200 || response.data.isEmpty { failures += 1 }
            } catch {
                failures += 1
            }
        }
        return failures
    }
    done.failures = onNetworkThread ? await session.withNetworkThreadExecutor { await loop() } : await loop()
    sem_post(&done.semaphore)
}
sem_wait(&done.semaphore)
print("\(count) requests, \(done.failures) failed")
exit(done.failures == 0 ? 0 : 1)
