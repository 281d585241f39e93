// swift-tools-version:6.1
import PackageDescription

/// Upcoming features turned on for every Swift target (the swift-log discipline).
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Wattle",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "Wattle", targets: ["Wattle"]),
        .library(name: "WattleKeychain", targets: ["WattleKeychain"]),
        .library(name: "WattleTesting", targets: ["WattleTesting"]),
        .executable(name: "wattle", targets: ["wattle"]),
        .executable(name: "wattle-demo", targets: ["wattle-demo"]),
    ],
    dependencies: [
        // Library targets: swift-log only.
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        // Samples and tests only (the demo/test server and the CLI).
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.30.0"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.30.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.10.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
    ],
    targets: [
        // MARK: C layer
        .target(
            name: "CCurl",
            linkerSettings: [.linkedLibrary("curl")]
        ),
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),

        // MARK: Libraries
        .target(
            name: "WattleKeychain",
            dependencies: ["CSodium", "CSQLite"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "Wattle",
            dependencies: [
                "CCurl",
                "CSodium",
                "WattleKeychain",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "WattleTesting",
            dependencies: ["Wattle", "WattleKeychain"],
            swiftSettings: strictSettings
        ),

        // MARK: Samples
        .target(
            name: "WattleDemoServer",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Samples/DemoServer",
            swiftSettings: strictSettings
        ),
        .target(
            name: "ExampleClient",
            dependencies: ["Wattle", "WattleKeychain"],
            path: "Samples/ExampleClient",
            swiftSettings: strictSettings
        ),
        // The CLI's arguments, kept from glibc's call to constructors (see its header).
        .target(
            name: "CArguments",
            path: "Samples/CArguments"
        ),
        .target(
            name: "WattleCLIKit",
            dependencies: ["Wattle"],
            path: "Samples/WattleCLIKit",
            swiftSettings: strictSettings
        ),
        // The CLI links only the libraries (no SwiftNIO, BoringSSL or Foundation), so that it
        // starts fast; `wattle demo` and `wattle serve` exec `wattle-demo`, built beside it.
        .executableTarget(
            name: "wattle",
            dependencies: [
                "Wattle",
                "WattleKeychain",
                "WattleCLIKit",
                "CCurl",
                "CArguments",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Samples/wattle",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "wattle-demo",
            dependencies: [
                "Wattle",
                "WattleKeychain",
                "WattleDemoServer",
                "ExampleClient",
                "WattleCLIKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Samples/wattle-demo",
            swiftSettings: strictSettings
        ),

        // MARK: Tests
        .testTarget(
            name: "WattleTests",
            dependencies: [
                "Wattle", "WattleKeychain", "WattleTesting", "WattleDemoServer", "TestProxies",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "WattleKeychainTests",
            dependencies: ["WattleKeychain", "WattleTesting", "KeychainStressWorker", "TestProxies"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "WattleCLITests",
            dependencies: [
                "wattle", "wattle-demo", "WattleCLIKit", "CArguments", "Wattle", "WattleKeychain", "WattleDemoServer",
                "TestProxies",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // Real proxies (tinyproxy, microsocks) started by the library's and the CLI's tests, and
        // ChildProcess, which starts the processes tests run.
        .target(
            name: "TestProxies",
            path: "Tests/TestProxies",
            swiftSettings: strictSettings
        ),
        // A child process for the keychain's multi-process and SIGKILL tests.
        .executableTarget(
            name: "KeychainStressWorker",
            dependencies: ["WattleKeychain", "WattleTesting"],
            path: "Tests/KeychainStressWorker",
            swiftSettings: strictSettings
        ),
        // MARK: Fuzzing (libFuzzer targets, built by `make fuzz`)
        // Each builds two ways: normally, a program that replays the files it is given (the
        // committed corpus in Fuzz/Corpus/<Name>, run by a test); with `-D WATTLE_FUZZ`,
        // sanitizer coverage, ASan and libFuzzer's fuzzer_no_main runtime (`make fuzz`), a
        // libFuzzer binary.
        .target(
            name: "WattleFuzzSupport",
            path: "Fuzz/Support",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "FuzzCLIItem",
            dependencies: ["WattleCLIKit", "WattleFuzzSupport"],
            path: "Fuzz/CLIItem",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "FuzzURLQuery",
            dependencies: ["Wattle", "WattleFuzzSupport"],
            path: "Fuzz/URLQuery",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "FuzzHeaderParsing",
            dependencies: ["Wattle", "WattleFuzzSupport"],
            path: "Fuzz/HeaderParsing",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "FuzzSealedRecord",
            dependencies: ["WattleKeychain", "WattleFuzzSupport"],
            path: "Fuzz/SealedRecord",
            swiftSettings: strictSettings
        ),
    ]
)
