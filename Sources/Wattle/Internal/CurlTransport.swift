import Logging

/// The default ``Transport``: Wattle's libcurl engine.
final class CurlTransport: Transport {
    /// The engine, also the task executor of ``Session/withNetworkThreadExecutor(isolation:_:)``.
    let engine: CurlEngine
    /// The keychain item the engine's cookie jar is kept in, when the session keeps one there.
    let persistentJar: PersistentCookieJar?

    init(configuration: Configuration) {
        let engine = CurlEngine(configuration: configuration)
        self.engine = engine
        persistentJar = configuration.cookies.persistentJar.map {
            PersistentCookieJar(item: $0, engine: engine, logger: configuration.logger)
        }
        if configuration.httpVersion == .http2PriorKnowledge, !CurlGlobal.reusesCleartextPriorKnowledgeConnections {
            configuration.logger.warning(
                "HTTP/2 by prior knowledge: libcurl \(CurlGlobal.libcurlVersion) cannot reuse such a connection over plain http (fixed in 8.0.0), so each plain-http request opens its own connection. Over https, connections are reused."
            )
        }
    }

    deinit { engine.shutdown() }

    func perform(_ request: TransportRequest) async throws(WattleError) -> Response {
        if Task.isCancelled { throw .cancelled }
        if let persistentJar { try await persistentJar.ensureLoaded() }
        let transfer = CurlTransfer(request: request)
        if let stream = request.responseStream {
            // How a reader that caught up lets the paused transfer go on; dropped at its end.
            stream.setResumer { [engine] in engine.resume(transfer) }
        }
        defer { request.responseStream?.setResumer(nil) }
        let completed: CurlTransfer.Completed
        do {
            completed = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    transfer.continuation = continuation
                    engine.start(transfer)
                }
            } onCancel: {
                engine.cancel(transfer)
            }
        } catch let error as WattleError {
            // libcurl took the cookies of a head that arrived before the failure (a stream
            // cancelled, a body over the limit): they are kept as a whole response's are.
            if let persistentJar, transfer.receivedSetCookie { await persistentJar.saveAfterResponse(url: request.url) }
            throw error
        } catch {
            throw .transport(code: -1, message: "\(error)")
        }
        let response = Response(
            statusCode: completed.statusCode, headerSection: HeaderSection(completed.rawHeaders), data: completed.body,
            url: request.url, method: request.method, fileURL: completed.fileURL, metrics: completed.metrics)
        if let persistentJar, response.headers.contains("Set-Cookie") {
            await persistentJar.saveAfterResponse(url: request.url)
        }
        return response
    }
}
