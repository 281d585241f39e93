extension Session {
    /// Sends a request and returns once the response's head has arrived, with its body to read
    /// as it arrives (``ResponseStream``): server-sent events, JSON lines, a model's tokens.
    ///
    /// ```swift
    /// var request = Request("v1/completions", method: .post, body: .json(["prompt": "Koalas", "stream": true]))
    /// request.headers["Accept"] = "text/event-stream"
    /// for try await line in try await session.stream(request).lines where line.hasPrefix("data: ") {
    ///     print(line.dropFirst(6))
    /// }
    /// ```
    ///
    /// Everything before the body is as for ``send(_:)``: redirects are followed, the stored
    /// token is sent and refreshed after a 401, the retry policy retries, and a status outside
    /// `200..<300` is ``WattleError/httpStatus(_:)`` with its body (up to
    /// ``Configuration/maximumResponseSize``), unless the request accepts it
    /// (``Request/acceptedStatuses``): the stream is then that response, its body read whole
    /// first, as ``send(_:)`` would (``WattleError/responseTooLarge(limit:url:)`` past the
    /// limit). Once the head of a 2xx response has arrived nothing is sent again: a transfer
    /// that fails part-way ends the stream with its error.
    ///
    /// A 2xx body has no size limit, and no total timeout unless the request sets one
    /// (``Request/timeout``): the stall timeout (``Timeouts/stall``) is what ends a silent
    /// stream, not counting the time the transfer waits for a slow reader. A stream that may
    /// stay silent longer (events with no heartbeat) needs a session with a longer one, or none.
    ///
    /// With a transport other than Wattle's own (`StubTransport`), the whole response arrives
    /// first and its body is read from memory, in one piece.
    ///
    /// - Throws: as ``send(_:)``, for anything before the head.
    public func stream(_ request: Request) async throws(WattleError) -> ResponseStream {
        let buffer = ResponseStreamBuffer()
        let task = Task { [self] in
            let result: Result<Response, WattleError>
            do throws(WattleError) {
                result = .success(try await sendRetrying(request, download: nil, stream: buffer))
            } catch {
                result = .failure(error)
            }
            buffer.finish(result)
        }
        buffer.setTask(task)
        var head = try await buffer.head().get()
        head.sessionDecoder = configuration.jsonDecoder
        return ResponseStream(response: head, buffer: buffer)
    }

    /// `GET endpoint?parameters`, its body read as it arrives; see ``stream(_:)``.
    public func stream(_ endpoint: String, parameters: Parameters = [:], headers: HTTPHeaders = [:])
        async throws(WattleError) -> ResponseStream
    {
        try await stream(Request(endpoint, method: .get, query: parameters, headers: headers))
    }
}
