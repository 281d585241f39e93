// swift-tools-version:6.1
// The benchmark programs of `make bench`, kept out of the library's manifest.
// Build: swift build -c release --package-path Benchmarks
import PackageDescription

let package = Package(
    name: "WattleBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Wattle", path: "../"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.20.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
    ],
    targets: [
        // Timing, CPU, RSS and the JSON line every program prints.
        .target(name: "BenchSupport"),
        .executableTarget(
            name: "bench-wattle",
            dependencies: ["BenchSupport", .product(name: "Wattle", package: "Wattle")]
        ),
        // N sequential GETs with a synchronous main, for callgrind (see its main.swift).
        .executableTarget(
            name: "profile-wattle",
            dependencies: [.product(name: "Wattle", package: "Wattle")]
        ),
        .executableTarget(
            name: "bench-urlsession",
            dependencies: ["BenchSupport"]
        ),
        .executableTarget(
            name: "bench-ahc",
            dependencies: [
                "BenchSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "bench-keychain",
            dependencies: ["BenchSupport", .product(name: "WattleKeychain", package: "Wattle")]
        ),
    ]
)
