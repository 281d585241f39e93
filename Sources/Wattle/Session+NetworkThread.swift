extension Session {
    /// Runs `operation` with this session's network thread as its preferred task executor, so
    /// that a request it sends starts, completes and resumes it on that one thread.
    ///
    /// By default a request crosses threads twice: the calling task hands it to Wattle's
    /// network thread, which wakes a thread of Swift's pool to resume the task with the
    /// response. Inside `operation` (and in the child tasks it creates with `async let` or a
    /// task group, which inherit the preference) the task itself runs on the network thread, as
    /// code runs on an event loop in SwiftNIO: no hand-off, so higher throughput and less CPU
    /// for many small requests in a row (see BENCHMARKS.md).
    ///
    /// ```swift
    /// let names = try await session.withNetworkThreadExecutor {
    ///     var names: [String] = []
    ///     for id in 1...100 { names.append(try await session.get("users/\(id)").decode(User.self).name) }
    ///     return names
    /// }
    /// ```
    ///
    /// The price: while `operation`'s code runs, the network thread runs nothing else. Keep
    /// the work between requests short, and never block in it (no `sleep`, no synchronous file
    /// or network I/O, no long computation); await instead. Code isolated to the main actor, or
    /// to an actor with an executor of its own, still runs there; other actors' code, like any
    /// nonisolated async code, runs on the network thread. Wattle's own blocking work, reading
    /// and saving tokens in a keychain, is moved off it. Unstructured tasks (`Task { }`) do not
    /// inherit the preference, and code after the call runs where it would have without it.
    /// With a transport other than Wattle's libcurl engine (for example `StubTransport`),
    /// `operation` runs as it would without this call.
    public func withNetworkThreadExecutor<Value, Failure: Error>(
        isolation: isolated (any Actor)? = #isolation,
        _ operation: () async throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        guard let engine = (transport as? CurlTransport)?.engine else { return try await operation() }
        // The engine (and so its thread) stays alive until `operation` returns: the task holds
        // the executor only unowned.
        defer { withExtendedLifetime(engine) {} }
        // The runtime moves the task off the network thread when the preference ends (tested:
        // the caller's next line does not run there).
        return try await withTaskExecutorPreference(engine, isolation: isolation, operation: operation)
    }

    /// The network thread as a task executor, for `Task(executorPreference:)`; nil with a
    /// transport other than Wattle's libcurl engine. For the `wattle` CLI, whose one request
    /// then starts, completes and resumes on that thread without waking Swift's pool.
    package var networkThreadExecutor: (any TaskExecutor)? {
        (transport as? CurlTransport)?.engine
    }
}
