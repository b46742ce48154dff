// Board-wide queries as data: what `list`, `ready` and `next` print with --json, computed
// once here for the `board` command and for board-daemon answering it over its socket.

#include "support/unique_fd.hpp"

#include <board/app.hpp>
#include <board/codec.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

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

QueryAnswer answer_query(Board& board, const BoardQuery& query) {
    QueryAnswer out;
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
            out.output = "null\n";
            out.message = query.next.human ? "next: nothing awaits a human"
                                           : "next: nothing for the agent now";
            return out;
        }
        if (!query.next.human) {
            out.output = encode_ticket(*next.value().ticket) + "\n";
            return out;
        }
        // The human side: what the ticket asks of them, beside the ticket.
        auto json = ticket_to_json(*next.value().ticket);
        if (const auto request = request_of(*next.value().ticket))
            json["request"] = boost::json::parse(request_json(*request));
        out.output = boost::json::serialize(json) + "\n";
        return out;
    }
    auto picked = query.kind == BoardQuery::Kind::list ? board.list(query.list, query.for_person)
                                                       : board.ready(query.next.filter);
    if (!picked) return refused(picked.error());
    out.output = to_json(picked.value());
    out.warnings = std::move(picked.value().warnings);
    return out;
}

std::string encode_answer(const QueryAnswer& answer) {
    json::object head{{"exit", answer.exit_code},
                      {"message", answer.message},
                      {"warnings", json::value_from(answer.warnings)}};
    return json::serialize(head) + "\n" + answer.output;
}

std::filesystem::path query_socket_path(const std::filesystem::path& root) {
    return root / ".board" / "query.sock";
}

std::optional<QueryAnswer> ask_daemon(const std::filesystem::path& root,
                                      const BoardQuery& query,
                                      std::chrono::milliseconds timeout) {
    const std::string path = query_socket_path(root).string();
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof address.sun_path) return std::nullopt;  // too long to name
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    UniqueFd fd{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
    if (!fd) return std::nullopt;
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0)
        return std::nullopt;  // no daemon (or a socket a dead one left)
    if (!send_all(fd.get(), encode_query(query))) return std::nullopt;
    ::shutdown(fd.get(), SHUT_WR);
    // The whole wait is bounded: a daemon too busy to answer in time is not waited for.
    const auto usec = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
    const timeval limit{static_cast<time_t>(usec / 1'000'000),
                        static_cast<suseconds_t>(usec % 1'000'000)};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string reply;
    std::size_t got = 0;
    for (;;) {
        if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
        if (reply.size() - got < 64 * 1024)
            reply.resize(std::max<std::size_t>(reply.size() * 2, 256 * 1024));
        const auto n = ::read(fd.get(), reply.data() + got, reply.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return std::nullopt;  // the timeout, or the daemon went away
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
    }
    reply.resize(got);
    const auto header_end = reply.find('\n');
    if (header_end == std::string::npos) return std::nullopt;
    boost::system::error_code ec;
    const auto head = json::parse(std::string_view{reply}.substr(0, header_end), ec);
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
    reply.erase(0, header_end + 1);
    answer.output = std::move(reply);
    return answer;
}

}  // namespace board::app
