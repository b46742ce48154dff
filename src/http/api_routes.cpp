// The JSON API and the page: each request routed to the application layer (board/app.hpp)
// and its result encoded. Who may ask is checked first (check_access).

#include "http/markdown.hpp"
#include "http/server_impl.hpp"
#include "http/web_assets.hpp"

namespace board::http {
namespace {

/// `?key`, `?key=1`, `?key=yes`: set; absent, `0` or `false`: not.
bool flag(const Target& target, const char* key) {
    const auto value = target.get(key);
    return target.has(key) && value != "0" && value != "false";
}

}  // namespace

Response HttpServer::Impl::reply(bhttp::status status, std::string body, std::string_view type) {
    Response res{status, 11};
    res.set(bhttp::field::content_type, type);
    res.set(bhttp::field::cache_control, "no-store");
    res.set("X-Content-Type-Options", "nosniff");
    res.body() = std::move(body);
    return res;
}

std::optional<Response> HttpServer::Impl::check_access(const Request& req, const Target& target) {
    const std::string host{req[bhttp::field::host]};
    // Exactly one Host: with two, a proxy and this server could each read a different one.
    if (loopback && (req.count(bhttp::field::host) != 1 || !host_is_loopback(host)))
        return reply(bhttp::status::forbidden,
                     json_error("the Host header must name this machine (localhost or "
                                "127.0.0.1) on a loopback server"));
    const bool write = req.method() != bhttp::verb::get && req.method() != bhttp::verb::head;
    if (!token.empty() && (write || reads_need_token)) {
        const auto presented = presented_token(req[bhttp::field::authorization]);
        if (presented.empty() || !same_token(presented, token)) {
            auto res = reply(bhttp::status::unauthorized,
                             json_error("a token is required: `Authorization: Bearer "
                                        "<token>` (see .board/http-token)"));
            res.set(bhttp::field::www_authenticate, "Bearer");
            return res;
        }
    }
    (void)target;
    if (write) {
        // A cross-site form or fetch cannot set a custom header without a CORS preflight,
        // which this server never grants; an Origin, when sent, must be this server.
        if (req["X-Board-Request"].empty())
            return reply(bhttp::status::forbidden,
                         json_error("writes need the header X-Board-Request: 1 (CSRF guard)"));
        const std::string origin{req[bhttp::field::origin]};
        if (!origin.empty() && origin != "http://" + host)
            return reply(
                bhttp::status::forbidden,
                json_error("cross-origin write refused (Origin " + header_safe(origin) + ")"));
    }
    return std::nullopt;
}

Response HttpServer::Impl::handle(const Request& req, const Target& target) {
    const auto& seg = target.segments;
    if (seg.empty() || seg[0] != "api") return serve_page(req, target);
    if (auto refusal = check_access(req, target)) return std::move(*refusal);

    std::string as = options.default_human;
    if (const auto named = req["X-Board-As"]; !named.empty()) as = std::string{named};
    if (!app::is_valid_person_name(as))
        return reply(bhttp::status::unprocessable_entity,
                     json_error("X-Board-As: \"" + header_safe(as) +
                                "\" is not a person's name (printable, no spaces or ':')"));
    const Actor by{ActorKind::human, as};  // the API never acts as an agent

    const bool get = req.method() == bhttp::verb::get;
    const bool post = req.method() == bhttp::verb::post;
    const std::size_t n = seg.size();
    const bool board_wide =
        get && n == 2 && (seg[1] == "tickets" || seg[1] == "inbox" || seg[1] == "questions");
    if (board_wide) {
        const std::string key{req.target()};
        if (const auto hit = board_cache.find(key); hit != board_cache.end())
            return reply(bhttp::status::ok, hit->second);
        Response res = seg[1] == "tickets" ? list(target)
                       : seg[1] == "inbox"
                           ? answer(board->inbox())
                           : answer(board->questions(target.get("pending") == "1" ||
                                                     target.get("pending") == "true"));
        if (res.result() == bhttp::status::ok && res["Board-Warning"].empty()) {
            if (board_cache.size() >= 64) board_cache.clear();
            board_cache.emplace(key, res.body());
        }
        return res;
    }
    if (n == 2 && seg[1] == "tickets" && post) return create(req, by);
    if (n == 2 && seg[1] == "stats" && get) return stats(target);
    if (n == 2 && seg[1] == "whoami" && get)
        return reply(bhttp::status::ok,
                     json::serialize(
                         json::object{{"as", "human:" + as}, {"last_event_id", feed.last_id()}}) +
                         "\n");
    if (n >= 3 && seg[1] == "tickets") {
        const std::string& id = seg[2];
        if (!is_valid_ticket_id(id))
            return reply(bhttp::status::not_found,
                         json_error("\"" + id + "\" is not a ticket id (expected PREFIX-N)"));
        const auto dir = *ticket_dir(options.board, id);
        std::error_code ec;
        if (!fs::exists(dir / std::string{log_file_name}, ec))
            return reply(bhttp::status::not_found,
                         json_error("no ticket " + id + " on this board"));
        if (n == 3 && get) return show(id, std::nullopt, flag(target, "html"));
        if (n == 4 && get && seg[3] == "events") return events(id, target);
        if (n == 4 && get && seg[3] == "state") {
            const auto at = target.get("seq");
            if (at.empty() || at.size() > 12 ||
                !std::all_of(at.begin(), at.end(), [](char c) { return c >= '0' && c <= '9'; }))
                return reply(bhttp::status::unprocessable_entity,
                             json_error("?seq=N is required (a non-negative integer)"));
            return show(id, std::stoll(at));
        }
        if (n == 4 && get && seg[3] == "artifacts") return artifacts(id);
        if (n == 5 && get && seg[3] == "artifacts")
            return artifact(dir, seg[4], flag(target, "html"));
        if (n == 4 && get && seg[3] == "runs") {
            auto runs = board->runs(id);
            if (!runs) return refused(runs.error());
            return reply(bhttp::status::ok, app::runs_json(runs.value()));
        }
        if (n == 6 && get && seg[3] == "runs" && (seg[5] == "output" || seg[5] == "prompt"))
            return run_file(id, seg[4], seg[5] == "prompt", target);
        if (n == 4 && post) return write(req, id, seg[3], by);
    }
    if (n == 4 && seg[1] == "questions" && seg[3] == "answer" && post) {
        const std::string& qid = seg[2];
        const auto dot = qid.rfind('.');
        if (dot != std::string::npos && is_valid_ticket_id(qid.substr(0, dot))) {
            std::error_code ec;
            if (!fs::exists(
                    *ticket_dir(options.board, qid.substr(0, dot)) / std::string{log_file_name},
                    ec))
                return reply(bhttp::status::not_found,
                             json_error("no ticket " + qid.substr(0, dot) + " on this board"));
        }
        json::object body;
        if (auto bad = parse_body(req, body)) return std::move(*bad);
        std::string value, note, error;
        if (const auto* v = body.if_contains("value"); v && v->is_bool())
            value = v->as_bool() ? "true" : "false";
        else if (v && (v->is_int64() || v->is_uint64() || v->is_double()))
            value = json::serialize(*v);
        else if (!string_member(body, "value", value, error, true))
            return reply(bhttp::status::unprocessable_entity, json_error(error));
        if (!string_member(body, "note", note, error))
            return reply(bhttp::status::unprocessable_entity, json_error(error));
        return written(board->answer(qid, value, note, by));
    }
    const bool known =
        (n == 2 && (seg[1] == "tickets" || seg[1] == "inbox" || seg[1] == "questions" ||
                    seg[1] == "whoami" || seg[1] == "stats"));
    if (known) return reply(bhttp::status::method_not_allowed, json_error("method not allowed"));
    return reply(bhttp::status::not_found, json_error("no such endpoint"));
}

Response HttpServer::Impl::serve_page(const Request& req, const Target& target) {
    if (req.method() != bhttp::verb::get && req.method() != bhttp::verb::head)
        return reply(bhttp::status::method_not_allowed, json_error("method not allowed"));
    std::string path = "/";
    for (const auto& s : target.segments) path += (path.size() > 1 ? "/" : "") + s;
    // The printed link carries the token once: the page keeps it in its own origin's storage
    // and drops it from the address bar. A wrong one is said here, not at the first write.
    if (path == "/" && target.has("token") &&
        (token.empty() || !same_token(target.get("token"), token)))
        return reply(bhttp::status::unauthorized, json_error("wrong token"));
    const auto asset = web_asset(path);
    if (!asset) return reply(bhttp::status::not_found, json_error("not found"), "application/json");
    auto res = reply(bhttp::status::ok, std::string{asset->body}, asset->content_type);
    res.set("Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors "
            "'none'; base-uri 'none'");
    res.set("Referrer-Policy", "no-referrer");
    res.set(bhttp::field::cache_control, "no-cache");
    // Earlier versions kept the token in this cookie, which every port of the host received.
    if (req[bhttp::field::cookie].find("board_token=") != std::string_view::npos)
        res.set(bhttp::field::set_cookie, "board_token=; Path=/; Max-Age=0");
    return res;
}

Response HttpServer::Impl::refused(const app::Refusal& refusal) {
    using Kind = app::Refusal::Kind;
    const auto status = refusal.kind == Kind::invalid     ? bhttp::status::unprocessable_entity
                        : refusal.kind == Kind::not_found ? bhttp::status::not_found
                        : refusal.kind == Kind::refused   ? bhttp::status::conflict
                                                          : bhttp::status::internal_server_error;
    return reply(status,
                 json_error(refusal.message, app::exit_code_of(refusal.kind), refusal.warnings));
}

Response HttpServer::Impl::written(const app::Result<app::Written>& result, bhttp::status ok) {
    if (!result) return refused(result.error());
    changed(result.value().ticket.id);
    auto res = reply(ok, app::to_json(result.value()));
    for (const auto& w : result.value().warnings) res.insert("Board-Warning", header_safe(w));
    return res;
}

std::optional<Response> HttpServer::Impl::parse_body(const Request& req, json::object& body) {
    if (req.body().empty()) return std::nullopt;
    boost::system::error_code ec;
    auto value = json::parse(req.body(), ec);
    if (ec || !value.is_object())
        return reply(bhttp::status::unprocessable_entity,
                     json_error("the request body must be a JSON object"));
    body = std::move(value.as_object());
    return std::nullopt;
}

Response HttpServer::Impl::list(const Target& target) {
    ListFilter filter;
    if (target.has("status")) {
        auto statuses = app::parse_status_list(target.get("status"));
        if (!statuses)
            return reply(
                bhttp::status::unprocessable_entity,
                json_error("status: \"" + target.get("status") + "\" is not a list of statuses"));
        filter.statuses = std::move(*statuses);
    }
    if (target.has("awaiting")) {
        auto types = app::parse_awaiting_list(target.get("awaiting"));
        if (!types)
            return reply(bhttp::status::unprocessable_entity,
                         json_error("awaiting: \"" + target.get("awaiting") +
                                    "\" is not a list of awaiting types"));
        filter.awaiting_any = types->empty();
        filter.awaiting = std::move(*types);
    }
    filter.parent = target.get("parent");
    filter.standalone = flag(target, "standalone");
    filter.orphan = flag(target, "orphan");
    filter.all = flag(target, "all");
    filter.labels = app::split_list(target.get("label"));
    return answer(board->list(filter, target.get("for")));
}

Response HttpServer::Impl::stats(const Target& target) {
    const UnixMillis now = wall_clock_now();
    const std::string given = target.has("since") ? target.get("since") : "168h";
    const auto since = app::parse_since(given, now);
    if (!since)
        return reply(bhttp::status::unprocessable_entity,
                     json_error("since: \"" + given +
                                "\" is neither a time like 2026-11-26T05:00:00Z nor a duration "
                                "like 24h"));
    return answer(board->stats(*since, now));
}

Response HttpServer::Impl::create(const Request& req, const Actor& by) {
    json::object body;
    if (auto bad = parse_body(req, body)) return std::move(*bad);
    app::CreateRequest request;
    std::string error;
    bool ok = string_member(body, "title", request.title, error, true) &&
              string_member(body, "description", request.description, error) &&
              string_member(body, "type", request.type, error) &&
              string_member(body, "parent", request.parent, error) &&
              string_member(body, "requires", request.requires_, error) &&
              string_member(body, "awaiting", request.awaiting, error) &&
              string_list_member(body, "labels", request.labels, error) &&
              string_list_member(body, "blocked_by", request.blocked_by, error);
    if (ok) {
        if (const auto* p = body.if_contains("priority"); p && !p->is_null()) {
            if (!p->is_int64() || p->as_int64() < 0 || p->as_int64() > 4) {
                error = "\"priority\" must be an integer from 0 to 4";
                ok = false;
            } else {
                request.priority = static_cast<int>(p->as_int64());
            }
        }
    }
    if (!ok) return reply(bhttp::status::unprocessable_entity, json_error(error));
    return written(board->create(request, by), bhttp::status::created);
}

namespace {

/// `"comments": [{"file", "line", "text"}]` of a reject: absent is none.
bool line_comments(const json::object& body,
                   std::vector<app::LineComment>& out,
                   std::string& error) {
    const auto* list = body.if_contains("comments");
    if (!list || list->is_null()) return true;
    if (!list->is_array()) {
        error = "\"comments\" must be a list of {\"file\", \"line\", \"text\"}";
        return false;
    }
    for (const auto& item : list->as_array()) {
        const auto* o = item.if_object();
        const auto* line = o ? o->if_contains("line") : nullptr;
        app::LineComment c;
        if (!o || !line || !line->is_int64() || line->as_int64() < 1 ||
            line->as_int64() > 100'000'000 || !string_member(*o, "file", c.file, error, true) ||
            !string_member(*o, "text", c.text, error, true)) {
            if (error.empty())
                error = "each comment needs \"file\", \"line\" (from 1) and \"text\"";
            return false;
        }
        c.line = static_cast<int>(line->as_int64());
        out.push_back(std::move(c));
    }
    return true;
}

}  // namespace

Response HttpServer::Impl::write(const Request& req,
                                 const std::string& id,
                                 const std::string& verb,
                                 const Actor& by) {
    json::object body;
    if (auto bad = parse_body(req, body)) return std::move(*bad);
    std::string text, error;
    const auto field = [&](const char* key, bool required) {
        return string_member(body, key, text, error, required);
    };
    const auto invalid = [&] {
        return reply(bhttp::status::unprocessable_entity, json_error(error));
    };
    if (verb == "approve") {
        if (!field("note", false)) return invalid();
        return written(board->approve(id, text, by));
    }
    if (verb == "reject") {
        std::vector<app::LineComment> comments;
        if (!line_comments(body, comments, error)) return invalid();
        if (!field("feedback", comments.empty())) return invalid();
        return written(board->reject(id, text, by, comments));
    }
    if (verb == "note") {
        if (!field("text", true)) return invalid();
        return written(board->note(id, text, app::NoteFrom::human, by));
    }
    if (verb == "cancel") {
        if (!field("reason", false)) return invalid();
        return written(board->cancel(id, text, by));
    }
    return reply(bhttp::status::not_found, json_error("no such action: " + verb));
}

Response HttpServer::Impl::show(const std::string& id,
                                std::optional<std::int64_t> until,
                                bool html) {
    auto view = board->show(id, until);
    if (!view) return refused(view.error());
    if (until) return reply(bhttp::status::ok, app::replay_step_json(view.value()));
    if (!html) return reply(bhttp::status::ok, app::to_json(view.value()));
    // `show --json`'s own shape, one member more: the page need not parse Markdown itself.
    boost::system::error_code ec;
    auto ticket = json::parse(app::to_json(view.value()), ec);
    if (ec || !ticket.is_object())
        return reply(bhttp::status::internal_server_error,
                     json_error(id + ": its JSON could not be read back: " + ec.message(), 3));
    ticket.as_object()["description_html"] = markdown_html(view.value().ticket.description);
    return reply(bhttp::status::ok, json::serialize(ticket) + "\n");
}

Response HttpServer::Impl::events(const std::string& id, const Target& target) {
    std::int64_t after = 0;
    if (const auto a = target.get("after"); !a.empty()) {
        if (a.size() > 12 ||
            !std::all_of(a.begin(), a.end(), [](char c) { return c >= '0' && c <= '9'; }))
            return reply(bhttp::status::unprocessable_entity,
                         json_error("?after=N must be a non-negative integer"));
        after = std::stoll(a);
    }
    std::string out = "[";
    bool first = true;
    std::string error;
    auto report =
        read_log(*ticket_dir(options.board, id) / std::string{log_file_name}, [&](const Event& e) {
            if (e.seq <= after) return;
            if (!first) out += ',';
            first = false;
            append_event(out, e);
            while (!out.empty() && out.back() == '\n') out.pop_back();
        });
    if (auto* failed = std::get_if<LogError>(&report))
        return reply(failed->kind == LogError::Kind::not_found
                         ? bhttp::status::not_found
                         : bhttp::status::internal_server_error,
                     json_error(failed->message, 3));
    out += "]\n";
    return reply(bhttp::status::ok, std::move(out));
}

Response HttpServer::Impl::artifacts(const std::string& id) {
    auto loaded = load_ticket(*ticket_dir(options.board, id));
    if (auto* failed = std::get_if<LogError>(&loaded))
        return reply(bhttp::status::internal_server_error, json_error(failed->message, 3));
    const auto ticket = ticket_to_json(std::get<Loaded>(loaded).ticket);
    return reply(bhttp::status::ok, json::serialize(ticket.at("artifacts")) + "\n");
}

Response HttpServer::Impl::artifact(const fs::path& dir, const std::string& name, bool html) {
    bool missing = false;
    std::string error;
    auto text = read_confined(dir, name, 16u << 20, missing, error);
    if (!text)
        return reply(missing ? bhttp::status::not_found : bhttp::status::forbidden,
                     json_error(error));
    auto res = html ? reply(bhttp::status::ok, markdown_html(*text), "text/html; charset=utf-8")
                    : reply(bhttp::status::ok, std::move(*text), "text/plain; charset=utf-8");
    // Opened directly, as text or as the rendered fragment, it runs and loads nothing.
    res.set("Content-Security-Policy", "default-src 'none'; sandbox");
    return res;
}

}  // namespace board::http
