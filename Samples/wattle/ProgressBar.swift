import Synchronization
import Wattle
import WattleCLIKit

/// A one-line progress bar on stderr.
final class ProgressBar: Sendable {
    private let lastDraw = Mutex(ContinuousClock.now - .seconds(1))

    func update(_ progress: DownloadProgress) {
        lastDraw.withLock { lastDraw in
            let now = ContinuousClock.now
            guard now - lastDraw >= .milliseconds(100) else { return }
            lastDraw = now
            draw(progress)
        }
    }

    func finish() { FileHandleOutput.write("\n", to: 2) }

    private func draw(_ progress: DownloadProgress) {
        let megabytes = Double(progress.receivedBytes) / 1_048_576
        if let fraction = progress.fractionCompleted {
            let width = 30
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            let digits = Decimals.string(fraction * 100, places: 0)
            let percent = String(repeating: " ", count: max(0, 3 - digits.count)) + digits
            FileHandleOutput.write("\r[\(bar)] \(percent)% \(Decimals.string(megabytes, places: 1)) MB", to: 2)
        } else {
            FileHandleOutput.write("\r\(Decimals.string(megabytes, places: 1)) MB", to: 2)
        }
    }
}
