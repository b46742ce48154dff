// What agents did and are doing: a ticket's runs, one run's prompt and output (as a file, or
// followed live as Server-Sent Events), and the ticket branch's diff.

#include "codec/json_writer.hpp"
#include "http/server_impl.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

#include <charconv>
#include <fstream>

namespace board::http {
namespace {

/// A run id as the daemon names runs: digits only, so it can be part of no other path.
bool is_run_id(std::string_view run) {
    return !run.empty() && run.size() <= 12 &&
           std::all_of(run.begin(), run.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// Up to `limit` bytes of `file` from `offset` (clamped to the file), and the file's size.
struct Piece {
    std::string text;
    std::uint64_t size = 0;
    bool missing = false;
};

Piece read_piece(const fs::path& file, std::uint64_t offset, std::uint64_t limit) {
    Piece piece;
    std::ifstream in(file, std::ios::binary | std::ios::ate);
    if (!in) {
        piece.missing = true;
        return piece;
    }
    piece.size = static_cast<std::uint64_t>(in.tellg());
    if (offset >= piece.size) return piece;
    piece.text.resize(static_cast<std::size_t>(std::min(limit, piece.size - offset)));
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(piece.text.data(), static_cast<std::streamsize>(piece.text.size()));
    piece.text.resize(static_cast<std::size_t>(in.gcount()));
    return piece;
}

/// How much of `text` to send now: through its last line break, or (a long line still being
/// written) up to a whole UTF-8 character, so no character is split across two events.
std::size_t sendable(std::string_view text, bool everything) {
    if (everything) return text.size();
    if (const auto nl = text.rfind('\n'); nl != std::string_view::npos) return nl + 1;
    if (text.size() < 4096) return 0;
    std::size_t cut = text.size();
    // Back up over continuation bytes to the lead byte of the last character, and leave
    // that character for later.
    while (cut > 0 && (static_cast<unsigned char>(text[cut - 1]) & 0xC0) == 0x80) --cut;
    return cut > 0 ? cut - 1 : text.size();
}

}  // namespace

std::optional<app::RunView> HttpServer::Impl::find_run(const std::string& id,
                                                       const std::string& run,
                                                       Response& refusal) {
    if (!is_run_id(run)) {
        refusal = reply(bhttp::status::not_found,
                        json_error("\"" + run + "\" is not a run id (digits, e.g. 0003)"));
        return std::nullopt;
    }
    auto runs = board->runs(id);
    if (!runs) {
        refusal = refused(runs.error());
        return std::nullopt;
    }
    for (auto& r : runs.value())
        if (r.id == run) return std::move(r);
    refusal = reply(bhttp::status::not_found, json_error(id + " has no run " + run));
    return std::nullopt;
}

Response HttpServer::Impl::run_file(const std::string& id,
                                    const std::string& run,
                                    bool prompt,
                                    const Target& target) {
    Response refusal;
    const auto found = find_run(id, run, refusal);
    if (!found) return refusal;
    // The output may be large and still growing: its tail, at most `?tail=` bytes.
    constexpr std::uint64_t default_tail = 1u << 20;
    constexpr std::uint64_t max_tail = 16u << 20;
    std::uint64_t tail = default_tail;
    if (const auto t = target.get("tail"); !t.empty()) {
        if (t.size() > 9 ||
            !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }))
            return reply(bhttp::status::unprocessable_entity,
                         json_error("?tail=BYTES must be a non-negative integer"));
        tail = std::min<std::uint64_t>(std::stoull(t), max_tail);
    }
    const fs::path& file = prompt ? found->prompt_file : found->log_file;
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    if (ec)
        return reply(bhttp::status::not_found,
                     json_error(file.filename().string() + " is not there (a run that never "
                                                           "began, or removed)"));
    const std::uint64_t from = prompt || size <= tail ? 0 : size - tail;
    auto piece = read_piece(file, from, prompt ? max_tail : tail);
    auto res = reply(bhttp::status::ok, std::move(piece.text), "text/plain; charset=utf-8");
    res.set("Board-Run-Bytes", std::to_string(piece.size));
    res.set("Content-Security-Policy", "default-src 'none'; sandbox");
    return res;
}

asio::awaitable<Response> HttpServer::Impl::diff(const Request& req, const Target& target) {
    if (auto refusal = check_access(req, target)) co_return std::move(*refusal);
    const std::string& id = target.segments[2];
    if (!is_valid_ticket_id(id))
        co_return reply(bhttp::status::not_found, json_error("\"" + id + "\" is not a ticket id"));
    const auto stat = target.get("stat");
    const bool summary = stat == "1" || stat == "true";
    const std::filesystem::path root = options.board;
    std::optional<app::Result<std::string>> text;
    // A board of its own on the worker: Board::diff reads only the disk, and the shared one
    // is the loop's. Named, and capturing by reference (this frame waits for it): GCC 12
    // destroys a temporary of a co_await's full expression twice (toolchain.md §3, snag 11).
    const auto read = [&]() -> asio::awaitable<void> {
        app::Board own{root};
        text.emplace(own.diff(id, summary));
        co_return;
    };
    co_await asio::co_spawn(slow_reads, read, asio::use_awaitable);
    if (!*text) co_return refused(text->error());
    auto res = reply(bhttp::status::ok, std::move(text->value()), "text/plain; charset=utf-8");
    res.set("Content-Security-Policy", "default-src 'none'; sandbox");
    co_return res;
}

using namespace boost::asio::experimental::awaitable_operators;

asio::awaitable<void> HttpServer::Impl::serve_run_output(beast::tcp_stream& stream,
                                                         const std::string& id,
                                                         const std::string& run,
                                                         std::string_view last_event_id) {
    auto& socket = stream.socket();
    Response refusal;
    auto found = is_valid_ticket_id(id) ? find_run(id, run, refusal) : std::nullopt;
    if (!is_valid_ticket_id(id))
        refusal = reply(bhttp::status::not_found, json_error("\"" + id + "\" is not a ticket id"));
    if (!found) {
        refusal.keep_alive(false);
        refusal.prepare_payload();
        co_await bhttp::async_write(stream, refusal, asio::as_tuple(asio::use_awaitable));
        co_return;
    }
    std::string out =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        "X-Accel-Buffering: no\r\nConnection: close\r\n\r\n";
    const fs::path file = found->log_file;
    // Each frame's id is how far into the run's log its text reaches: a client that
    // reconnects with it (Last-Event-ID) resumes there, with nothing sent twice. Otherwise
    // the backlog: the last part of what was printed, from a line start.
    std::uint64_t offset = 0;
    std::error_code size_error;
    const auto size = fs::file_size(file, size_error);
    std::uint64_t resume = 0;
    const auto* id_end = last_event_id.data() + last_event_id.size();
    const auto [parsed_to, parse_error] = std::from_chars(last_event_id.data(), id_end, resume);
    const bool resuming = !last_event_id.empty() && !size_error && parsed_to == id_end &&
                          parse_error == std::errc{} && resume <= size;
    if (resuming) {
        offset = resume;
    } else if (!size_error && size > options.run_backlog) {
        offset = size - options.run_backlog;
        auto head = read_piece(file, offset, options.run_backlog);
        const auto nl = head.text.find('\n');
        offset += nl == std::string::npos ? 0 : nl + 1;
        out += sse_frame({}, json::serialize(json::object{{"skipped", offset}}), "skipped");
    }
    std::string carried;  // printed, not yet sent: the rest of a line
    asio::steady_timer tick(io);
    bool peer_left = false;
    auto peer_gone = [&]() -> asio::awaitable<void> {
        std::array<char, 256> ignored{};
        for (;;) {
            auto [ec, n] = co_await socket.async_read_some(asio::buffer(ignored),
                                                           asio::as_tuple(asio::use_awaitable));
            if (ec) break;
        }
        peer_left = true;
    };
    auto send = [&]() -> asio::awaitable<void> {
        for (bool ended = !found->end.empty();;) {
            auto piece = read_piece(file, offset, 1u << 16);
            offset += piece.text.size();
            carried += piece.text;
            // A run's end is an event on the ticket's log; what it printed before that is
            // all in the file by then (the daemon closes the file first).
            const bool last = ended && piece.text.empty();
            const std::size_t n = sendable(carried, last);
            if (n > 0) {
                std::string data;
                codec_detail::append_json_string(data, std::string_view{carried}.substr(0, n));
                carried.erase(0, n);
                out += sse_frame(
                    std::to_string(offset - carried.size()), "{\"text\":" + data + "}", "output");
            }
            if (last) {
                out += sse_frame(std::to_string(offset), app::runs_json({*found}), "end");
            }
            if (!out.empty()) {
                if (!co_await write_in_time(socket, out)) co_return;
                out.clear();
            }
            if (last || stopped || peer_left) co_return;
            if (piece.text.empty()) {
                tick.expires_after(options.run_poll);
                co_await tick.async_wait(asio::as_tuple(asio::use_awaitable));
                if (!ended) {
                    Response ignored;
                    auto now = find_run(id, run, ignored);
                    if (now && !now->end.empty()) {
                        found = std::move(now);
                        ended = true;
                    }
                }
            }
        }
    };
    co_await (send() || peer_gone());
}

}  // namespace board::http
