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
/// - a cookie set or changed here (its line differs from `base`) replaces the stored one of
///   the same identity (name, domain, path and subdomain flag, as libcurl replaces cookies);
/// - a cookie a server removed here (in `base` and still live there, not in `ours`: a
///   `Max-Age=0` or a past `Expires`) is removed from the store, whatever line it has there;
/// - a cookie that merely expired here is no removal: another writer's fresher one stays;
/// - every other stored cookie stays as it is, and expired lines are left out.
enum CookieJarMerge {
    /// A jar's live cookies by identity, in the order listed.
    struct Jar: Equatable {
        private(set) var lines: [String] = []
        private var indexByIdentity: [String: Int] = [:]

        /// The live cookies among `lines` (lines that are no cookie are skipped).
        init(_ lines: [String], now: Date) {
            for line in lines {
                guard let cookie = Cookie(netscapeLine: line), cookie.isLive(at: now) else { continue }
                self[cookie.identity] = line
            }
        }

        init() {}

        /// The line of the cookie with this identity; nil removes it.
        subscript(identity: String) -> String? {
            get { indexByIdentity[identity].map { lines[$0] } }
            set {
                if let index = indexByIdentity[identity] {
                    if let newValue {
                        lines[index] = newValue
                    } else {
                        lines.remove(at: index)
                        indexByIdentity[identity] = nil
                        for (key, position) in indexByIdentity where position > index {
                            indexByIdentity[key] = position - 1
                        }
                    }
                } else if let newValue {
                    indexByIdentity[identity] = lines.count
                    lines.append(newValue)
                }
            }
        }

        /// Every cookie's identity and line, in order.
        var entries: [(identity: String, line: String)] {
            indexByIdentity.sorted { $0.value < $1.value }.map { ($0.key, lines[$0.value]) }
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
