import Synchronization
import Wattle
import WattleCLIKit

/// A one-line progress bar on stderr, redrawn at most every 100 ms.
final class ProgressBar: Sendable {
    /// What the bar has shown and been told, under one lock (reports come on the network thread).
    private struct State {
        /// When a frame was last drawn (a second ago at first, so the first report draws).
        var lastDraw = ContinuousClock.now - .seconds(1)
        /// The last progress reported, drawn or not.
        var last: DownloadProgress?
        /// The line is ended: later reports draw nothing.
        var finished = false
    }

    private let state = Mutex(State())

    func update(_ progress: DownloadProgress) {
        state.withLock { state in
            guard !state.finished else { return }
            state.last = progress
            let now = ContinuousClock.now
            guard now - state.lastDraw >= .milliseconds(100) else { return }
            state.lastDraw = now
            Self.draw(progress)
        }
    }

    /// Draws the final state and ends the line, so that what follows (an error line, the
    /// shell's prompt) starts on a line of its own. After a complete download the bar shows the
    /// whole length (the last report may predate the last bytes); after a failure, the last
    /// bytes reported. Without any report, there is no line to end.
    func finish(completed: Bool) {
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            guard var last = state.last else { return }
            if completed, let expected = last.expectedBytes, expected > last.receivedBytes {
                last.receivedBytes = expected
            }
            Self.draw(last)
            FileHandleOutput.write("\n", to: 2)
        }
    }

    private static func draw(_ progress: DownloadProgress) {
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
