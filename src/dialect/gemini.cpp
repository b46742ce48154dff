// Gemini CLI: `gemini --output-format stream-json`, one JSON event per line.
//   {"type":"init","session_id":...,"model":...}
//   {"type":"message","role":"assistant","content":...,"delta":true}   chunks of one message
//   {"type":"tool_use",...} {"type":"tool_result",...}                  end the message
//   {"type":"error","message":...}
//   {"type":"result","status":"success"|"error","error":{"message"},
//    "stats":{"input_tokens","output_tokens","cached"}}

#include "dialect/json_lines.hpp"
#include "dialect/readers.hpp"

namespace board::dialect_detail {
namespace {

class GeminiReader final : public JsonLinesReader {
    void event(const boost::json::object& event, std::string_view type) override {
        if (type == "init") {
            if (auto s = string_at(event, "session_id"); !s.empty()) report_.session = s;
        } else if (type == "message" && string_at(event, "role") == "assistant") {
            if (between_messages_) final_.start();
            between_messages_ = false;
            final_.append(string_at(event, "content"));
            show_progress(string_at(event, "content"));
        } else if (type == "tool_use" || type == "tool_result") {
            between_messages_ = true;
        } else if (type == "error") {
            named_error_ = string_at(event, "message");
        } else if (type == "result") {
            if (const auto* stats = object_at(event, "stats")) {
                report_.tokens.input = count_at(*stats, "input_tokens");
                report_.tokens.output = count_at(*stats, "output_tokens");
                report_.tokens.cache_read = count_at(*stats, "cached");
            }
            if (string_at(event, "status") == "error") {
                report_.failed_in_output = true;
                if (const auto* error = object_at(event, "error"))
                    named_error_ = string_at(*error, "message");
            }
        }
    }

    bool between_messages_ = true;
};

}  // namespace

std::unique_ptr<OutputReader> make_gemini_reader() {
    return std::make_unique<GeminiReader>();
}

}  // namespace board::dialect_detail
