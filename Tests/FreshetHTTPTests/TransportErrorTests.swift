import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import FreshetHTTP

@Suite("TransportError")
struct TransportErrorTests {
    static func request(_ string: String, method: HTTPMethod = .get) throws -> HTTPRequest {
        HTTPRequest(method: method, url: try #require(URL(string: string)))
    }

    @Test("maps each URLError code to a transport code", arguments: [
        (URLError.Code.cancelled, TransportError.Code.cancelled),
        (.timedOut, .timedOut),
        (.cannotConnectToHost, .cannotConnect),
        (.cannotFindHost, .cannotConnect),
        (.dnsLookupFailed, .cannotConnect),
        (.notConnectedToInternet, .cannotConnect),
        (.internationalRoamingOff, .cannotConnect),
        (.dataNotAllowed, .cannotConnect),
        (.callIsActive, .cannotConnect),
        (.networkConnectionLost, .connectionLost),
        (.badServerResponse, .badResponse),
        (.cannotParseResponse, .badResponse),
        (.zeroByteResource, .badResponse),
        (.cannotDecodeRawData, .badResponse),
        (.cannotDecodeContentData, .badResponse),
        (.httpTooManyRedirects, .badResponse),
        (.redirectToNonExistentLocation, .badResponse),
        (.dataLengthExceedsMaximum, .badResponse),
        (.secureConnectionFailed, .other),
        (.serverCertificateUntrusted, .other),
        (.badURL, .other),
        (.unsupportedURL, .other),
        (.unknown, .other),
    ])
    func mapping(urlCode: URLError.Code, expected: TransportError.Code) throws {
        let request = try Self.request("http://127.0.0.1:8080/api/v2/pokemon")
        let error = TransportError(URLError(urlCode), request: request, timeout: .seconds(30))
        #expect(error.code == expected)
        #expect(error.method == .get)
        #expect(error.url == request.url)
    }

    @Test("describes itself in one line with the host, port, method and path", arguments: [
        (URLError.Code.cannotConnectToHost, "http://127.0.0.1:8080/api/v2/pokemon", HTTPMethod.get,
         "cannot connect to 127.0.0.1:8080: connection refused or host unreachable (GET /api/v2/pokemon)"),
        (.timedOut, "https://pokeapi.co/api/v2/pokemon?limit=20", .get,
         "timed out after 30 s waiting for pokeapi.co:443 (GET /api/v2/pokemon?limit=20)"),
        (.cannotFindHost, "http://pokeapi.invalid/api", .post,
         "cannot find host pokeapi.invalid:80: DNS lookup failed (POST /api)"),
        (.notConnectedToInternet, "https://pokeapi.co", .get,
         "cannot connect to pokeapi.co:443: not connected to a network (GET /)"),
        (.networkConnectionLost, "http://[::1]:9000/items", .patch,
         "connection to [::1]:9000 lost before the response was complete (PATCH /items)"),
        (.cancelled, "http://localhost/a%20b?q=1", .delete,
         "request cancelled (DELETE /a%20b?q=1)"),
        (.badServerResponse, "http://localhost:81/", .get,
         "bad response from localhost:81 (GET /)"),
    ])
    func description(urlCode: URLError.Code, url: String, method: HTTPMethod, expected: String) throws {
        let error = TransportError(URLError(urlCode), request: try Self.request(url, method: method), timeout: .seconds(30))
        #expect(error.description == expected)
    }

    @Test("says how long it waited, in seconds or milliseconds", arguments: [
        (Duration.seconds(30), "30 s"), (.milliseconds(250), "250 ms"), (.milliseconds(1500), "1500 ms"), (.seconds(2), "2 s"),
    ])
    func timeoutWording(timeout: Duration, words: String) throws {
        let error = TransportError(URLError(.timedOut), request: try Self.request("http://example.com/"), timeout: timeout)
        #expect(error.message == "timed out after \(words) waiting for example.com:80")
    }

    @Test("names the host that failed when URLSession reports one after a redirect")
    func failingURL() throws {
        let failing = try #require(URL(string: "https://cdn.example.com:8443/x"))
        let error = TransportError(
            URLError(.cannotConnectToHost, userInfo: [NSURLErrorFailingURLErrorKey: failing]),
            request: try Self.request("https://example.com/x"),
            timeout: .seconds(30)
        )
        #expect(error.description == "cannot connect to cdn.example.com:8443: connection refused or host unreachable (GET /x)")
    }

    @Test("is cancelled whenever the calling task was cancelled, whatever URLSession threw")
    func taskCancellationWins() throws {
        let request = try Self.request("http://127.0.0.1:8080/")
        let timedOut = TransportError(mapping: URLError(.timedOut), request: request, timeout: .seconds(1), taskIsCancelled: true)
        #expect(timedOut.code == .cancelled)
        let cancellation = TransportError(mapping: CancellationError(), request: request, timeout: .seconds(1), taskIsCancelled: false)
        #expect(cancellation.code == .cancelled)
        let urlError = TransportError(mapping: URLError(.timedOut), request: request, timeout: .seconds(1), taskIsCancelled: false)
        #expect(urlError.code == .timedOut)
    }

    @Test("maps an error that is not a URLError to other with its description")
    func otherErrors() throws {
        struct Weird: Error, CustomStringConvertible { var description: String { "weird" } }
        let error = TransportError(mapping: Weird(), request: try Self.request("http://127.0.0.1:8080/x"), timeout: .seconds(1), taskIsCancelled: false)
        #expect(error.code == .other)
        #expect(error.description == "request failed: weird (GET /x)")
    }

    @Test("describes itself with the message alone when it has no request")
    func bareDescription() {
        #expect(TransportError(code: .other, message: "something broke").description == "something broke")
    }

    @Test("matches its code in catch clauses, typed or not")
    func patternMatching() {
        func fail(_ code: TransportError.Code) throws(TransportError) {
            throw TransportError(code: code, message: "test")
        }
        var caught: [String] = []
        for code in [TransportError.timedOut, .cannotConnect, .connectionLost, .cancelled, .badResponse, .other] {
            do {
                try fail(code)
            } catch TransportError.timedOut {
                caught.append("timedOut")
            } catch TransportError.cannotConnect, TransportError.connectionLost {
                caught.append("network")
            } catch TransportError.cancelled {
                caught.append("cancelled")
            } catch {
                caught.append("other: \(error.code)")
            }
        }
        #expect(caught == ["timedOut", "network", "network", "cancelled", "other: badResponse", "other: other"])

        let untyped: any Error = TransportError(code: .timedOut, message: "test")
        #expect(TransportError.timedOut ~= untyped)
        #expect(!(TransportError.cancelled ~= untyped))
        #expect(!(TransportError.timedOut ~= (CancellationError() as any Error)))
    }

    @Test("writes the endpoint with the scheme's default port", arguments: [
        ("http://example.com/a", "example.com:80"),
        ("https://example.com/a", "example.com:443"),
        ("https://example.com:8443/a", "example.com:8443"),
        ("http://[::1]:8080/", "[::1]:8080"),
        ("ftp://example.com/a", "example.com"),
        ("file:///tmp/x", "file:///tmp/x"),
    ])
    func endpoint(url: String, expected: String) throws {
        #expect(TransportError.endpoint(of: try #require(URL(string: url))) == expected)
    }
}
