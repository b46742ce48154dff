#include "orchestrator/output_capture.hpp"

#include <boost/json.hpp>

#include <algorithm>

namespace board::orchestrator {
namespace {

namespace json = boost::json;

bool is_fence_line(std::string_view line) {
    std::size_t i = 0;
    while (i < line.size() && i < 3 && line[i] == ' ') ++i;
    const auto rest = line.substr(i);
    return rest.substr(0, 3) == "```" || rest.substr(0, 3) == "~~~";
}

/// Whether a tag spanning lines is open after `line`, given whether it was open before.
bool still_open(std::string_view line, std::string_view open, std::string_view close, bool was) {
    const auto o = line.rfind(open);
    const auto c = line.rfind(close);
    if (o != std::string_view::npos && (c == std::string_view::npos || c < o)) return true;
    if (c != std::string_view::npos) return false;
    return was;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

const json::string* string_at(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v ? v->if_string() : nullptr;
}

}  // namespace

OutputCapture::OutputCapture(std::size_t max_scan_bytes, std::size_t max_line_bytes)
    : max_scan_bytes_(max_scan_bytes)
    , max_line_bytes_(max_line_bytes) {}

void OutputCapture::feed(std::string_view bytes) {
    out_.bytes += bytes.size();
    while (!bytes.empty()) {
        const auto nl = bytes.find('\n');
        if (nl == std::string_view::npos) {
            pending_.append(bytes);
            if (pending_.size() >= max_line_bytes_) {
                on_line(pending_);
                pending_.clear();
            }
            return;
        }
        if (pending_.empty()) {
            on_line(bytes.substr(0, nl));
        } else {
            pending_.append(bytes.substr(0, nl));
            on_line(pending_);
            pending_.clear();
        }
        bytes.remove_prefix(nl + 1);
    }
}

CapturedOutput OutputCapture::finish() {
    if (!pending_.empty()) {
        on_line(pending_);
        pending_.clear();
    }
    return std::move(out_);
}

void OutputCapture::on_line(std::string_view line) {
    const auto body = trim(line);
    if (body.size() >= 2 && body.front() == '{' && body.back() == '}' &&
        body.find("\"type\"") != std::string_view::npos) {
        boost::system::error_code ec;
        const json::value v = json::parse(body, ec);
        if (!ec && v.is_object()) {
            const auto& o = v.get_object();
            if (const auto* type = string_at(o, "type")) {
                if (*type == "system") {
                    if (const auto* s = string_at(o, "session_id")) out_.session = std::string{*s};
                } else if (*type == "assistant") {
                    const auto* message = o.if_contains("message");
                    const auto* content = message && message->is_object()
                                              ? message->get_object().if_contains("content")
                                              : nullptr;
                    if (content && content->is_array()) {
                        for (const auto& block : content->get_array()) {
                            if (!block.is_object()) continue;
                            const auto* kind = string_at(block.get_object(), "type");
                            const auto* text = string_at(block.get_object(), "text");
                            if (kind && *kind == "text" && text) {
                                saw_assistant_text_ = true;
                                on_text(*text);
                                on_text("\n");
                            }
                        }
                    }
                } else if (*type == "result") {
                    if (const auto* cost = o.if_contains("total_cost_usd");
                        cost && cost->is_number()) {
                        out_.cost_usd = cost->to_number<double>();
                    }
                    if (const auto* s = string_at(o, "session_id")) out_.session = std::string{*s};
                    // The result repeats the last assistant message; read it only when the
                    // agent printed no assistant events (a non-verbose run).
                    if (const auto* text = string_at(o, "result"); text && !saw_assistant_text_) {
                        on_text(*text);
                        on_text("\n");
                    }
                }
                // Other events (tool use and results) are not the agent speaking.
                return;
            }
        }
    }
    on_text_line(line);
}

void OutputCapture::on_text(std::string_view text) {
    // Text from a JSON event may hold several lines; the last piece without `\n` is a line too.
    while (!text.empty()) {
        const auto nl = text.find('\n');
        on_text_line(text.substr(0, nl));
        if (nl == std::string_view::npos) break;
        text.remove_prefix(nl + 1);
    }
}

void OutputCapture::on_text_line(std::string_view line) {
    if (const auto shown = trim(line); !shown.empty()) {
        last_line_.assign(shown.substr(0, 200));
    }
    const bool tagged = line.find("<promise") != std::string_view::npos ||
                        line.find("</promise") != std::string_view::npos ||
                        line.find("<question") != std::string_view::npos ||
                        line.find("</question") != std::string_view::npos;
    const bool keep = tagged || in_promise_ || in_question_ || is_fence_line(line);
    in_promise_ = still_open(line, "<promise", "</promise>", in_promise_);
    in_question_ = still_open(line, "<question", "</question>", in_question_);
    if (!keep) return;
    auto& kept = out_.scan_text;
    if (kept.size() + line.size() + 1 > max_scan_bytes_ && !kept.empty()) {
        const auto cut = kept.find('\n', kept.size() / 2);
        kept.erase(0, cut == std::string::npos ? kept.size() : cut + 1);
        if (!dropped_) {
            out_.warnings.emplace_back("the output held more tagged text than the scan keeps (" +
                                       std::to_string(max_scan_bytes_ >> 20) +
                                       " MB); the oldest part was not scanned");
            dropped_ = true;
        }
    }
    kept.append(line.substr(0, std::min(line.size(), max_scan_bytes_)));
    kept.push_back('\n');
}

}  // namespace board::orchestrator
