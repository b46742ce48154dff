#include "model_standin.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <cstdlib>
#include <fstream>
#include <regex>

namespace board::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;

/// Tool call ids are unique across the conversation, as a real model's are.
std::atomic<int> tool_calls{0};

std::string sse(std::string_view event, const json::value& data) {
    return "event: " + std::string{event} + "\ndata: " + json::serialize(data) + "\n\n";
}

/// Every piece of text a request carries, whatever the API's nesting.
void collect_text(const json::value& v, std::string& out) {
    if (const auto* s = v.if_string()) {
        out.append(*s).push_back('\n');
    } else if (const auto* a = v.if_array()) {
        for (const auto& item : *a) collect_text(item, out);
    } else if (const auto* o = v.if_object()) {
        for (const auto& [key, value] : *o) collect_text(value, out);
    }
}

/// The artifact the prompt asks for: the backticked path inside the run's folder.
std::string artifact_path(const std::string& text) {
    static const std::regex wanted{R"(`(/[^`\n]*/runs/[0-9]{4}-[a-z]+/[a-z-]+\.md)`)"};
    std::smatch m;
    return std::regex_search(text, m, wanted) ? m[1].str() : std::string{};
}

std::string phase_of(const std::string& path) {
    static const std::regex run{R"(/runs/[0-9]{4}-([a-z]+)/)"};
    std::smatch m;
    return std::regex_search(path, m, run) ? m[1].str() : "work";
}

std::string artifact_text(const std::string& path) {
    const std::string phase = phase_of(path);
    // A new revision each time: a rewrite after a rejection must differ from what was
    // rejected, or the board rightly refuses it as unchanged.
    static std::atomic<int> revision{0};
    return "---\nstatus: complete\nsummary: " + phase + " by the stand-in model\n---\n# " + phase +
           "\n\nDone as asked (revision " + std::to_string(++revision) + ").\n";
}

constexpr std::string_view final_words =
    "Done: the artifact is written.\n<promise>COMPLETE</promise>";

bool has_item(const json::array& items, std::initializer_list<std::string_view> types) {
    for (const auto& item : items) {
        if (const auto* o = item.if_object()) {
            if (const auto* t = o->if_contains("type"); t && t->is_string()) {
                for (auto type : types)
                    if (t->get_string() == type) return true;
            }
            if (const auto* content = o->if_contains("content"); content && content->is_array())
                if (has_item(content->get_array(), types)) return true;
        }
    }
    return false;
}

bool offers_tool(const json::object& req, std::string_view name) {
    const auto* tools = req.if_contains("tools");
    if (!tools || !tools->is_array()) return false;
    for (const auto& t : tools->get_array()) {
        const auto* o = t.if_object();
        const auto* n = o ? o->if_contains("name") : nullptr;
        if (n && n->is_string() && n->get_string() == name) return true;
    }
    return false;
}

/// The last content block of `type` in a message (null if none).
json::value last_block(const json::value& message, std::string_view type) {
    const auto* o = message.if_object();
    const auto* content = o ? o->if_contains("content") : nullptr;
    json::value found;
    if (content && content->is_array()) {
        for (const auto& block : content->get_array()) {
            const auto* b = block.if_object();
            const auto* t = b ? b->if_contains("type") : nullptr;
            if (t && t->is_string() && t->get_string() == type) found = block;
        }
    }
    return found;
}

/// The name of the tool an assistant message called last, if it called one.
std::string last_tool_use(const json::value& message) {
    const json::value block = last_block(message, "tool_use");
    const auto* b = block.if_object();
    const auto* name = b ? b->if_contains("name") : nullptr;
    return name && name->is_string() ? std::string{name->get_string()} : std::string{};
}

/// Claude Code's turn: the Messages API event stream.
std::string messages_reply(const json::object& req) {
    const auto* messages = req.if_contains("messages");
    const json::array none;
    const json::array& msgs = messages && messages->is_array() ? messages->get_array() : none;
    std::string text;
    if (messages) collect_text(*messages, text);
    const std::string path = artifact_path(text);
    // Like a careful agent: write the artifact; Claude Code refuses to overwrite a file that
    // was not read first (a rewrite after a rejection), so then read it and write again.
    std::string tool;
    if (!path.empty() && offers_tool(req, "Write")) {
        // Claude Code may merge a turn's tool calls into one message and their results into
        // the next: what counts is the last call and the last result.
        const bool answered = !msgs.empty() && has_item(json::array{msgs.back()}, {"tool_result"});
        std::string result;
        if (answered) collect_text(last_block(msgs.back(), "tool_result"), result);
        const std::string previous = msgs.size() >= 2 ? last_tool_use(msgs[msgs.size() - 2]) : "";
        if (!answered)
            tool = "Write";
        else if (previous == "Write" && result.find("has not been read") != std::string::npos)
            tool = "Read";
        else if (previous == "Read")
            tool = "Write";
    }
    const bool write = !tool.empty();

    json::object usage{{"input_tokens", 100},
                       {"output_tokens", 1},
                       {"cache_creation_input_tokens", 30},
                       {"cache_read_input_tokens", 50}};
    std::string out = sse("message_start",
                          json::object{{"type", "message_start"},
                                       {"message",
                                        {{"id", "msg_standin"},
                                         {"type", "message"},
                                         {"role", "assistant"},
                                         {"model", req.contains("model") ? req.at("model") : "m"},
                                         {"content", json::array{}},
                                         {"stop_reason", nullptr},
                                         {"stop_sequence", nullptr},
                                         {"usage", usage}}}});
    if (write) {
        json::object input{{"file_path", path}};
        if (tool == "Write") input["content"] = artifact_text(path);
        out += sse("content_block_start",
                   json::object{{"type", "content_block_start"},
                                {"index", 0},
                                {"content_block",
                                 {{"type", "tool_use"},
                                  {"id", "toolu_standin_" + std::to_string(++tool_calls)},
                                  {"name", tool},
                                  {"input", json::object{}}}}});
        out += sse("content_block_delta",
                   json::object{
                       {"type", "content_block_delta"},
                       {"index", 0},
                       {"delta",
                        {{"type", "input_json_delta"}, {"partial_json", json::serialize(input)}}}});
    } else {
        out += sse("content_block_start",
                   json::object{{"type", "content_block_start"},
                                {"index", 0},
                                {"content_block", {{"type", "text"}, {"text", ""}}}});
        out += sse("content_block_delta",
                   json::object{{"type", "content_block_delta"},
                                {"index", 0},
                                {"delta", {{"type", "text_delta"}, {"text", final_words}}}});
    }
    out += sse("content_block_stop", json::object{{"type", "content_block_stop"}, {"index", 0}});
    out += sse("message_delta",
               json::object{
                   {"type", "message_delta"},
                   {"delta",
                    {{"stop_reason", write ? "tool_use" : "end_turn"}, {"stop_sequence", nullptr}}},
                   {"usage", {{"output_tokens", 7}}}});
    out += sse("message_stop", json::object{{"type", "message_stop"}});
    return out;
}

/// Codex's turn: the Responses API event stream.
std::string responses_reply(const json::object& req) {
    const auto* input = req.if_contains("input");
    std::string text;
    if (input) collect_text(*input, text);
    const std::string path = artifact_path(text);
    const bool answered =
        input && input->is_array() &&
        has_item(input->get_array(), {"function_call_output", "custom_tool_call_output"});
    const bool write = !answered && !path.empty() && offers_tool(req, "exec_command");

    std::string out = sse("response.created",
                          json::object{{"type", "response.created"},
                                       {"response",
                                        {{"id", "resp_standin"},
                                         {"object", "response"},
                                         {"status", "in_progress"},
                                         {"output", json::array{}}}}});
    json::object item;
    if (write) {
        const std::string command =
            "cat > '" + path + "' <<'BOARD_EOF'\n" + artifact_text(path) + "BOARD_EOF\n";
        const std::string n = std::to_string(++tool_calls);
        item = {{"type", "function_call"},
                {"id", "fc_standin_" + n},
                {"call_id", "call_standin_" + n},
                {"name", "exec_command"},
                {"arguments", json::serialize(json::object{{"cmd", command}})},
                {"status", "completed"}};
    } else {
        item = {
            {"type", "message"},
            {"id", "msg_standin"},
            {"role", "assistant"},
            {"status", "completed"},
            {"content",
             json::array{json::object{
                 {"type", "output_text"}, {"text", final_words}, {"annotations", json::array{}}}}}};
    }
    out += sse(
        "response.output_item.added",
        json::object{{"type", "response.output_item.added"}, {"output_index", 0}, {"item", item}});
    if (!write) {
        out += sse("response.output_text.delta",
                   json::object{{"type", "response.output_text.delta"},
                                {"item_id", "msg_standin"},
                                {"output_index", 0},
                                {"content_index", 0},
                                {"delta", final_words}});
    }
    out += sse(
        "response.output_item.done",
        json::object{{"type", "response.output_item.done"}, {"output_index", 0}, {"item", item}});
    out += sse("response.completed",
               json::object{{"type", "response.completed"},
                            {"response",
                             {{"id", "resp_standin"},
                              {"object", "response"},
                              {"status", "completed"},
                              {"output", json::array{}},
                              {"usage",
                               {{"input_tokens", 100},
                                {"input_tokens_details", {{"cached_tokens", 20}}},
                                {"output_tokens", 7},
                                {"output_tokens_details", {{"reasoning_tokens", 0}}},
                                {"total_tokens", 107}}}}}});
    return out;
}

}  // namespace

struct ModelStandin::Impl {
    asio::io_context io;
    tcp::acceptor acceptor{io};
    Mode mode = Mode::agent;
    std::atomic<bool> stopping{false};
    mutable std::mutex mutex;
    std::vector<std::string> bodies;
    std::vector<std::thread> connections;
    std::thread accepting;

    void accept_loop() {
        for (;;) {
            tcp::socket socket{io};
            boost::system::error_code ec;
            acceptor.accept(socket, ec);
            if (stopping) return;
            if (ec) continue;
            std::lock_guard lock{mutex};
            connections.emplace_back(
                [this, s = std::move(socket)]() mutable { serve(std::move(s)); });
        }
    }

    void serve(tcp::socket socket) {
        beast::flat_buffer buffer;
        http::request<http::string_body> req;
        boost::system::error_code ec;
        http::read(socket, buffer, req, ec);
        if (ec) return;
        http::response<http::string_body> res{http::status::ok, req.version()};
        res.keep_alive(false);
        const std::string target{req.target()};
        if (req.method() == http::verb::post) {
            std::lock_guard lock{mutex};
            bodies.push_back(req.body());
            if (const char* log = std::getenv("BOARD_STANDIN_LOG"))  // for a person debugging
                std::ofstream(log, std::ios::app) << req.body() << '\n';
        }
        json::value body = json::parse(req.body(), ec);
        const bool messages = target.starts_with("/v1/messages");
        const bool responses = target.starts_with("/v1/responses");
        if (req.method() != http::verb::post || (!messages && !responses)) {
            res.result(req.method() == http::verb::head ? http::status::ok
                                                        : http::status::not_found);
            res.set(http::field::content_type, "application/json");
            res.body() = req.method() == http::verb::head ? "" : R"({"error":"not found"})";
        } else if (mode == Mode::unauthorized) {
            res.result(http::status::unauthorized);
            res.set(http::field::content_type, "application/json");
            res.body() =
                messages
                    ? R"({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}})"
                    : R"({"error":{"message":"invalid x-api-key","type":"invalid_request_error","code":"invalid_api_key"}})";
        } else if (ec || !body.is_object()) {
            res.result(http::status::bad_request);
            res.body() = R"({"error":"the stand-in reads JSON bodies only"})";
        } else {
            res.set(http::field::content_type, "text/event-stream");
            res.set(http::field::cache_control, "no-cache");
            res.body() =
                messages ? messages_reply(body.get_object()) : responses_reply(body.get_object());
        }
        res.prepare_payload();
        http::write(socket, res, ec);
        socket.shutdown(tcp::socket::shutdown_both, ec);
    }
};

ModelStandin::ModelStandin(Mode mode)
    : impl_(std::make_unique<Impl>()) {
    impl_->mode = mode;
    const tcp::endpoint loopback{asio::ip::make_address("127.0.0.1"), 0};
    impl_->acceptor.open(loopback.protocol());
    impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
    impl_->acceptor.bind(loopback);
    impl_->acceptor.listen();
    port_ = impl_->acceptor.local_endpoint().port();
    impl_->accepting = std::thread([this] { impl_->accept_loop(); });
}

ModelStandin::~ModelStandin() {
    impl_->stopping = true;
    {
        // Wake the blocking accept with a connection of our own.
        asio::io_context io;
        tcp::socket wake{io};
        boost::system::error_code ec;
        wake.connect({asio::ip::make_address("127.0.0.1"), port_}, ec);
    }
    impl_->accepting.join();
    std::vector<std::thread> connections;
    {
        std::lock_guard lock{impl_->mutex};
        connections.swap(impl_->connections);
    }
    for (auto& t : connections) t.join();
}

std::vector<std::string> ModelStandin::requests() const {
    std::lock_guard lock{impl_->mutex};
    return impl_->bodies;
}

unsigned short refusing_port() {
    asio::io_context io;
    tcp::acceptor probe{io, {asio::ip::make_address("127.0.0.1"), 0}};
    return probe.local_endpoint().port();  // closed again when `probe` goes
}

}  // namespace board::testing
