import Synchronization
import Wattle

/// `--offline`'s transport: prints the request it is given, as the session would send it (its
/// defaults, user agent, content type and body added), and sends nothing.
final class OfflineTransport: Transport {
    private let printing: PrintSelection
    private let printed = Atomic<Bool>(false)

    init(printing: PrintSelection) { self.printing = printing }

    /// Whether a request reached the transport (and was printed).
    var hasPrinted: Bool { printed.load(ordering: .relaxed) }

    func perform(_ request: TransportRequest) async throws(WattleError) -> Response {
        RequestPrinter.print(request, head: printing.requestHead, body: printing.requestBody, to: 1)
        printed.store(true, ordering: .relaxed)
        // Nothing comes back: the session stops here.
        throw .cancelled
    }
}
