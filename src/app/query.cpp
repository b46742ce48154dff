// Board-wide queries as data: what `list`, `ready` and `next` print with --json, computed
// once here for the `board` command and for board-daemon answering it over its socket.

#include "support/unique_fd.hpp"

#include <board/app.hpp>
#include <board/codec.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include <vector>

namespace board::app {
namespace {

namespace json = boost::json;

template <class Enum>
json::array names_of(const std::vector<Enum>& values) {
    json::array out;
    for (const auto v : values) out.emplace_back(to_string(v));
    return out;
}

template <class Enum>
std::optional<std::vector<Enum>> values_of(const json::value* names) {
    std::vector<Enum> out;
    if (!names) return out;
    if (!names->is_array()) return std::nullopt;
    for (const auto& name : names->as_array()) {
        if (!name.is_string()) return std::nullopt;
        const auto value = parse<Enum>(name.as_string());
        if (!value) return std::nullopt;
        out.push_back(*value);
    }
    return out;
}

bool flag(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_bool() && v->as_bool();
}

std::string text(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string{v->as_string()} : std::string{};
}

/// Writes all of `bytes` to `fd`; false when the peer went away.
bool send_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        const auto n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

}  // namespace

std::string encode_query(const BoardQuery& query) {
    json::object o;
    o["query"] = query.kind == BoardQuery::Kind::list    ? "list"
                 : query.kind == BoardQuery::Kind::ready ? "ready"
                                                         : "next";
    const ListFilter& l = query.list;
    o["statuses"] = names_of(l.statuses);
    o["awaiting_any"] = l.awaiting_any;
    o["awaiting"] = names_of(l.awaiting);
    o["parent"] = l.parent;
    o["standalone"] = l.standalone || query.next.filter.standalone;
    o["orphan"] = l.orphan || query.next.filter.orphan;
    o["labels"] = json::value_from(l.labels);
    o["all"] = l.all;
    o["for"] = query.for_person;
    o["epic"] = query.next.filter.epic;
    o["human"] = query.next.human;
    o["types"] = names_of(query.next.types);
    return json::serialize(o) + "\n";
}

std::optional<BoardQuery> decode_query(std::string_view line) {
    boost::system::error_code ec;
    const auto value = json::parse(line, ec);
    if (ec || !value.is_object()) return std::nullopt;
    const auto& o = value.as_object();
    BoardQuery q;
    const std::string kind = text(o, "query");
    if (kind == "list")
        q.kind = BoardQuery::Kind::list;
    else if (kind == "ready")
        q.kind = BoardQuery::Kind::ready;
    else if (kind == "next")
        q.kind = BoardQuery::Kind::next;
    else
        return std::nullopt;
    auto statuses = values_of<Status>(o.if_contains("statuses"));
    auto awaiting = values_of<Awaiting>(o.if_contains("awaiting"));
    auto types = values_of<Awaiting>(o.if_contains("types"));
    if (!statuses || !awaiting || !types) return std::nullopt;
    q.list.statuses = std::move(*statuses);
    q.list.awaiting = std::move(*awaiting);
    q.list.awaiting_any = flag(o, "awaiting_any");
    q.list.parent = text(o, "parent");
    q.list.standalone = q.next.filter.standalone = flag(o, "standalone");
    q.list.orphan = q.next.filter.orphan = flag(o, "orphan");
    q.list.all = flag(o, "all");
    q.for_person = text(o, "for");
    if (const auto* labels = o.if_contains("labels"); labels && labels->is_array())
        for (const auto& label : labels->as_array())
            if (label.is_string()) q.list.labels.emplace_back(label.as_string());
    q.next.filter.epic = text(o, "epic");
    q.next.human = flag(o, "human");
    q.next.types = std::move(*types);
    return q;
}

QueryAnswer answer_query(Board& board, const BoardQuery& query, std::ostream* output_to) {
    QueryAnswer out;
    const auto write_out = [&](std::string_view piece) {
        output_to->write(piece.data(), static_cast<std::streamsize>(piece.size()));
    };
    const auto answered = [&](std::string output) {
        if (output_to)
            write_out(output);
        else
            out.output = std::move(output);
        return out;
    };
    const auto refused = [&](const Refusal& r) {
        out.exit_code = exit_code_of(r.kind);
        out.message = r.message;
        out.warnings = r.warnings;
        return out;
    };
    if (query.kind == BoardQuery::Kind::next) {
        auto next = board.next(query.next);
        if (!next) return refused(next.error());
        out.warnings = std::move(next.value().warnings);
        if (!next.value().ticket) {
            out.exit_code = 1;
            out.message = query.next.human ? "next: nothing awaits a human"
                                           : "next: nothing for the agent now";
            return answered("null\n");
        }
        if (!query.next.human) return answered(encode_ticket(*next.value().ticket) + "\n");
        // The human side: what the ticket asks of them, beside the ticket.
        auto json = ticket_to_json(*next.value().ticket);
        if (const auto request = request_of(*next.value().ticket))
            json["request"] = boost::json::parse(request_json(*request));
        return answered(boost::json::serialize(json) + "\n");
    }
    auto picked = query.kind == BoardQuery::Kind::list ? board.list(query.list, query.for_person)
                                                       : board.ready(query.next.filter);
    if (!picked) return refused(picked.error());
    out.warnings = std::move(picked.value().warnings);
    out.changes_at = standings_change_at(picked.value());
    if (!output_to) return answered(to_json(picked.value()));
    write_json(picked.value(), write_out);
    return out;
}

std::string answer_header(const QueryAnswer& answer) {
    json::object head{{"exit", answer.exit_code},
                      {"message", answer.message},
                      {"warnings", json::value_from(answer.warnings)},
                      {"bytes", answer.output.size()}};
    return json::serialize(head) + "\n";
}

std::filesystem::path query_socket_path(const std::filesystem::path& root) {
    return root / ".board" / "query.sock";
}

namespace {

/// The answer a header line announces (its output still to come), or nullopt when the line is
/// not a header of ours; `bytes` is the output's announced length, when it says.
std::optional<QueryAnswer> decode_header(std::string_view line,
                                         std::optional<std::uint64_t>& bytes) {
    boost::system::error_code ec;
    const auto head = json::parse(line, ec);
    if (ec || !head.is_object()) return std::nullopt;
    const auto& o = head.as_object();
    const auto* exit = o.if_contains("exit");
    if (!exit || !exit->is_int64()) return std::nullopt;
    QueryAnswer answer;
    answer.exit_code = static_cast<int>(exit->as_int64());
    answer.message = text(o, "message");
    if (const auto* w = o.if_contains("warnings"); w && w->is_array())
        for (const auto& item : w->as_array())
            if (item.is_string()) answer.warnings.emplace_back(item.as_string());
    if (const auto* n = o.if_contains("bytes"); n && n->is_int64() && n->as_int64() >= 0)
        bytes = static_cast<std::uint64_t>(n->as_int64());
    return answer;
}

}  // namespace

std::optional<QueryAnswer> ask_daemon(const std::filesystem::path& root,
                                      const BoardQuery& query,
                                      std::chrono::milliseconds timeout,
                                      std::ostream* output_to) {
    const std::string path = query_socket_path(root).string();
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof address.sun_path) return std::nullopt;  // too long to name
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    UniqueFd fd{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
    if (!fd) return std::nullopt;
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0)
        return std::nullopt;  // no daemon (or a socket a dead one left)
    // Only a daemon of this user is believed: on a board others can reach, whoever could put
    // a socket there could otherwise answer with a made-up list.
    ucred peer{};
    socklen_t peer_size = sizeof peer;
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &peer, &peer_size) != 0 ||
        peer.uid != ::geteuid())
        return std::nullopt;
    if (!send_all(fd.get(), encode_query(query))) return std::nullopt;
    ::shutdown(fd.get(), SHUT_WR);
    // The whole wait is bounded: a daemon too busy to answer in time is not waited for.
    const auto usec = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
    const timeval limit{static_cast<time_t>(usec / 1'000'000),
                        static_cast<suseconds_t>(usec % 1'000'000)};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string header;
    std::optional<QueryAnswer> answer;
    std::optional<std::uint64_t> expected_bytes;
    std::uint64_t got = 0;
    // Past the header, a failure is nullopt only while nothing was written to `output_to`.
    const auto cut_short = [&]() -> std::optional<QueryAnswer> {
        if (!output_to || got == 0) return std::nullopt;
        answer->exit_code = 3;
        answer->message =
            "the board's daemon stopped answering midway: the output above is "
            "incomplete; ask again";
        return answer;
    };
    std::vector<char> buffer(64 * 1024);
    for (;;) {
        if (std::chrono::steady_clock::now() >= deadline)
            return answer ? cut_short() : std::nullopt;
        const auto n = ::read(fd.get(), buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return answer ? cut_short() : std::nullopt;  // the timeout, or it went away
        if (n == 0) break;
        std::string_view chunk{buffer.data(), static_cast<std::size_t>(n)};
        if (!answer) {
            const auto end = chunk.find('\n');
            header.append(chunk.substr(0, end));
            if (end == std::string_view::npos) {
                if (header.size() > (1u << 20)) return std::nullopt;  // not a header of ours
                continue;
            }
            chunk.remove_prefix(end + 1);
            answer = decode_header(header, expected_bytes);
            if (!answer) return std::nullopt;
        }
        if (output_to)
            output_to->write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        else
            answer->output.append(chunk);
        got += chunk.size();
    }
    if (!answer) return std::nullopt;
    if (expected_bytes && got != *expected_bytes) return cut_short();
    return answer;
}

}  // namespace board::app
