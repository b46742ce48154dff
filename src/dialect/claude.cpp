// Claude Code: `claude -p --output-format stream-json --verbose`, one JSON event per line.
//   {"type":"system","subtype":"init","session_id":...}
//   {"type":"assistant","message":{"id":...,"content":[{"type":"text","text":...}|tool_use]}}
//   {"type":"user",...}                      tool results: never the agent speaking
//   {"type":"system","subtype":"api_retry","attempt":1,"error_status":401,...}
//   {"type":"result","subtype":"success"|"error_max_turns"|...,"is_error":bool,
//    "result":"<final text or the error>","errors":[...],"api_error_status":401|null,
//    "session_id":...,"total_cost_usd":...,
//    "usage":{"input_tokens","output_tokens","cache_read_input_tokens",
//             "cache_creation_input_tokens"}}

#include "dialect/json_lines.hpp"
#include "dialect/readers.hpp"

namespace board::dialect_detail {
namespace {

namespace json = boost::json;

class ClaudeReader final : public JsonLinesReader {
public:
    AgentReport finish(int exit_code) override {
        AgentReport report = JsonLinesReader::finish(exit_code);
        if (api_status_ == 401 || api_status_ == 403) report.retry = Retry::futile;
        return report;
    }

private:
    void event(const json::object& event, std::string_view type) override {
        if (type == "system") {
            if (auto s = string_at(event, "session_id"); !s.empty()) report_.session = s;
        } else if (type == "assistant") {
            on_assistant(event);
        } else if (type == "result") {
            on_result(event);
        }
    }

    void on_assistant(const json::object& event) {
        const auto* message = object_at(event, "message");
        if (!message) return;
        // One message may arrive as several events, one per content block.
        if (const auto id = string_at(*message, "id"); id.empty() || id != message_id_) {
            message_id_ = id;
            final_.start();
        }
        const auto* content = message->if_contains("content");
        if (!content || !content->is_array()) return;
        for (const auto& block : content->get_array()) {
            if (!block.is_object()) continue;
            const auto& b = block.get_object();
            if (string_at(b, "type") == "text") {
                const auto text = string_at(b, "text");
                if (!final_.empty()) final_.append("\n");
                final_.append(text);
                show_progress(text);
            } else if (string_at(b, "type") == "tool_use") {
                show_progress(std::string{"using "} + std::string{string_at(b, "name")});
            }
        }
    }

    void on_result(const json::object& event) {
        if (auto s = string_at(event, "session_id"); !s.empty()) report_.session = s;
        if (const auto* cost = event.if_contains("total_cost_usd"); cost && cost->is_number())
            report_.cost_usd = cost->to_number<double>();
        if (const auto* usage = object_at(event, "usage")) {
            report_.tokens.input = count_at(*usage, "input_tokens");
            report_.tokens.output = count_at(*usage, "output_tokens");
            report_.tokens.cache_read = count_at(*usage, "cache_read_input_tokens");
            report_.tokens.cache_write = count_at(*usage, "cache_creation_input_tokens");
        }
        const auto subtype = string_at(event, "subtype");
        const auto* is_error = event.if_contains("is_error");
        const bool error = (is_error && is_error->is_bool() && is_error->get_bool()) ||
                           subtype.starts_with("error");
        const auto result = string_at(event, "result");
        if (error) {
            // `result` holds the error text; a run cut short (error_max_turns, a resume that
            // found no session) says why in `errors` instead.
            report_.failed_in_output = true;
            named_error_ = std::string{result};
            if (const auto* errors = event.if_contains("errors");
                named_error_.empty() && errors && errors->is_array() &&
                !errors->get_array().empty() && errors->get_array().front().is_string()) {
                named_error_ = std::string{errors->get_array().front().get_string()};
            }
            if (named_error_.empty()) named_error_ = std::string{subtype};
            // The HTTP status the API answered, where there was one: 401 and 403 stay so.
            if (const auto* status = event.if_contains("api_error_status");
                status && status->is_int64()) {
                api_status_ = status->get_int64();
            }
            return;
        }
        // The result repeats the final assistant message; it is the one that counts.
        if (!result.empty()) final_.replace(result);
    }

    std::string message_id_;
    std::int64_t api_status_ = 0;
};

}  // namespace

std::unique_ptr<OutputReader> make_claude_reader() {
    return std::make_unique<ClaudeReader>();
}

}  // namespace board::dialect_detail
