import Foundation

/// Why ``HTTPTransport/send(_:following:)`` returned a redirect instead of following it.
public struct RedirectRefusal: Sendable, Hashable, CustomStringConvertible {
    /// The rule that stopped the redirect.
    public enum Reason: String, Sendable, Hashable {
        /// A method other than `GET`/`HEAD` was redirected to another origin: its body, its
        /// credentials and its idempotency key never go there.
        case crossOriginUnsafeMethod
        /// A 301, 302 or 303 answered a method other than `GET`/`HEAD`; following it would
        /// silently turn the request into a `GET` (RFC 9110 §15.4.2–15.4.4).
        case methodChange
        /// The `Location` is missing or is not an `http`/`https` URL.
        case unusableLocation
    }

    /// The rule that stopped the redirect.
    public var reason: Reason
    /// The redirect's status.
    public var status: Int
    /// Where the redirect pointed, resolved against the response URL (without userinfo), when
    /// it had a usable `Location`.
    public var location: URL?
    /// One line for people, e.g. `a POST redirected (307) to another origin, http://127.0.0.1:8081, is not followed`.
    public var message: String

    public var description: String { message }
}
