/// What a finished download promises about its file if the machine crashes or loses power.
///
/// Either way, a download is written to a temporary file beside its destination and renamed
/// into place only when the whole body has arrived, so a failed or cancelled download never
/// leaves a partial file in its place or replaces an existing one (a resumable download keeps
/// what arrived beside it, hidden, to go on from). The choice is what happens to a download
/// that *finished* when the machine goes down shortly after.
///
/// ```swift
/// // A cache that can be fetched again: let the kernel write it when it will.
/// _ = try await session.download("assets/tiles.bin", to: cacheFile, durability: .unsynced)
/// ```
public enum DownloadDurability: Sendable, Hashable {
    /// The file is flushed to disk (`fsync`) before it is renamed into place, and its folder
    /// after, before `download` returns: on Linux, a finished download survives a crash or
    /// power loss. The default. (On Darwin, `fsync` leaves the drive's own cache unflushed.)
    ///
    /// Costs the time the disk takes to write the body; on Linux, Wattle starts that writing
    /// while the body still arrives, so the wait at the end is for the last few MiB. A folder
    /// that cannot be synced is logged as a warning, not thrown: the file is already in place.
    case synced
    /// The file is left in the page cache for the kernel to write in its own time, as `curl -o`
    /// and URLSession do. Faster where the disk is slower than memory; after a power loss (not
    /// a process crash) the file can be missing, empty or short, or still the file it replaced.
    case unsynced
}
