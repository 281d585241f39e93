#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A three-way merge of cookie jars in libcurl's (Netscape) line form, for a jar that several
/// sessions or processes keep in one keychain item (``PersistentCookieJar``).
///
/// Each writer knows the jar it last read or wrote (`base`) and the jar it holds now (`ours`);
/// the item holds `theirs`, which another writer may have changed since. The result is
/// `theirs` with this writer's changes applied, the later change of a cookie winning as it
/// would in one jar (a writer stores its changes right after the response that made them):
/// - a cookie whose line here differs from `base` (set, or changed) replaces the stored one of
///   the same identity (name, domain, path and subdomain flag, as libcurl replaces cookies);
/// - a cookie a server removed here (in `base` and still live there, not in `ours`: a
///   `Max-Age=0` or a past `Expires`) is removed from the store, whatever line it has there;
/// - a cookie that merely expired here is no removal: another writer's fresher one stays;
/// - every other stored cookie stays as it is (one set again here with the line `base` has,
///   after another writer removed it, is no change and stays removed), and expired lines are
///   left out.
enum CookieJarMerge {
    /// A jar's live cookies by identity, in the order listed.
    struct Jar {
        /// Each cookie's identity and line; nil where one was removed (so that a removal
        /// moves nothing: merging stays linear in the jars' sizes).
        private var slots: [(identity: String, line: String)?] = []
        private var indexByIdentity: [String: Int] = [:]

        /// The live cookies among `lines` (lines that are no cookie are skipped).
        init(_ lines: [String], now: Date) {
            for line in lines {
                guard let cookie = Cookie(netscapeLine: line), cookie.isLive(at: now) else { continue }
                self[cookie.identity] = line
            }
        }

        init() {}

        /// The lines, in order.
        var lines: [String] { slots.compactMap { $0?.line } }

        /// Every cookie's identity and line, in order.
        var entries: [(identity: String, line: String)] { slots.compactMap { $0 } }

        /// The line of the cookie with this identity; nil removes it.
        subscript(identity: String) -> String? {
            get { indexByIdentity[identity].flatMap { slots[$0]?.line } }
            set {
                if let index = indexByIdentity[identity] {
                    slots[index] = newValue.map { (identity, $0) }
                    if newValue == nil { indexByIdentity[identity] = nil }
                } else if let newValue {
                    indexByIdentity[identity] = slots.count
                    slots.append((identity, newValue))
                }
            }
        }
    }

    /// `theirs` with the changes from `base` to `ours` applied, as of `now`.
    static func merge(ours: Jar, base: Jar, theirs: Jar, now: Date) -> Jar {
        var merged = theirs
        for (identity, line) in ours.entries where base[identity] != line {
            merged[identity] = line
        }
        for (identity, line) in base.entries
        where ours[identity] == nil && Cookie(netscapeLine: line)?.isLive(at: now) == true {
            merged[identity] = nil
        }
        return merged
    }
}
