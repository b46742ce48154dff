// Codex CLI: `codex exec --json`, one JSON event per line.
//   {"type":"thread.started","thread_id":...}
//   {"type":"item.completed","item":{"type":"agent_message","text":...}}   what the agent said
//   {"type":"item.*","item":{"type":"command_execution"|"file_change"|"reasoning",...}}
//   {"type":"turn.completed","usage":{"input_tokens","cached_input_tokens","output_tokens"}}
//   {"type":"turn.failed","error":{"message":...}}   {"type":"error","message":...}
//   {"type":"error","message":"Reconnecting... waiting for network (Connection failed: ...)"}
//       printed again and again, for ever, while the service refuses connections
// Codex reports no cost.

#include "dialect/json_lines.hpp"
#include "dialect/readers.hpp"

namespace board::dialect_detail {
namespace {

class CodexReader final : public JsonLinesReader {
    void event(const boost::json::object& event, std::string_view type) override {
        if (type == "thread.started") {
            if (auto id = string_at(event, "thread_id"); !id.empty()) report_.session = id;
        } else if (type == "item.completed" || type == "item.started") {
            const auto* item = object_at(event, "item");
            if (!item) return;
            const auto kind = string_at(*item, "type");
            if (type == "item.completed" && kind == "agent_message") {
                final_.replace(string_at(*item, "text"));
                show_progress(string_at(*item, "text"));
            } else if (kind == "command_execution") {
                show_progress(string_at(*item, "command"));
            } else if (type == "item.completed" && kind == "error") {
                named_error_ = string_at(*item, "message");
            }
        } else if (type == "turn.completed") {
            if (const auto* usage = object_at(event, "usage")) {
                report_.tokens.input += count_at(*usage, "input_tokens");
                report_.tokens.cache_read += count_at(*usage, "cached_input_tokens");
                report_.tokens.output += count_at(*usage, "output_tokens");
            }
        } else if (type == "turn.failed") {
            report_.failed_in_output = true;
            if (const auto* error = object_at(event, "error"))
                named_error_ = string_at(*error, "message");
        } else if (type == "error") {
            named_error_ = string_at(event, "message");
            // Codex waits for the network without end while the model service refuses
            // connections; the board retries the run with backoff instead.
            if (named_error_.find("waiting for network") != std::string::npos)
                give_up(named_error_);
        }
    }
};

}  // namespace

std::unique_ptr<OutputReader> make_codex_reader() {
    return std::make_unique<CodexReader>();
}

}  // namespace board::dialect_detail
