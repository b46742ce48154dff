// Any program that speaks the text protocol: the signal and questions are read from what it
// prints (agent_output.hpp), minus every run of lines that repeats the prompt it was given,
// so an agent that echoes its input does not hand in the protocol's own examples.
//
// Only the lines that can change scan_signals()/scan_questions() are kept: fence lines, lines
// with a tag and the lines inside an open tag. Signals are found by their tags and fences are
// the only multi-line state, so dropping the rest keeps the scan exact and memory flat.

#include "dialect/json_lines.hpp"
#include "dialect/readers.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

namespace board::dialect_detail {
namespace {

bool is_fence_line(std::string_view line) {
    std::size_t i = 0;
    while (i < line.size() && i < 3 && line[i] == ' ') ++i;
    const auto rest = line.substr(i);
    return rest.starts_with("```") || rest.starts_with("~~~");
}

/// Whether a tag spanning lines is open after `line`, given whether it was open before.
bool still_open(std::string_view line, std::string_view open, std::string_view close, bool was) {
    const auto o = line.rfind(open);
    const auto c = line.rfind(close);
    if (o != std::string_view::npos && (c == std::string_view::npos || c < o)) return true;
    if (c != std::string_view::npos) return false;
    return was;
}

/// Recognises output that repeats the prompt: consecutive non-blank output lines equal to
/// consecutive non-blank prompt lines, two of them more than a fence. A single line that
/// happens to equal a prompt line (the agent's real `<promise>COMPLETE</promise>`) is the
/// agent's own, and so is one after a fence: an agent that closes its own code block and
/// then signals prints the very pair the protocol's example does. A fence starts no echo.
class EchoFilter {
public:
    explicit EchoFilter(std::string_view prompt) {
        while (!prompt.empty()) {
            const auto nl = prompt.find('\n');
            const auto line = trim(prompt.substr(0, nl));
            if (!line.empty()) {
                positions_[std::string{line}].push_back(lines_.size());
                lines_.emplace_back(line);
            }
            if (nl == std::string_view::npos) break;
            prompt.remove_prefix(nl + 1);
        }
    }

    /// Feeds one output line; `emit` gets every line that is the agent's own, in order.
    template <class Emit>
    void feed(std::string_view line, Emit&& emit) {
        const auto key = trim(line);
        if (key.empty()) {
            if (held_.empty()) emit(line);  // inside a possible echo, blanks are its own
            return;
        }
        if (!held_.empty() || echoing_) {
            std::vector<std::size_t> next;
            for (const std::size_t p : at_)
                if (p + 1 < lines_.size() && lines_[p + 1] == key) next.push_back(p + 1);
            if (!next.empty()) {
                at_ = std::move(next);
                if (echoing_) return;
                held_.emplace_back(line);
                if (!is_fence_line(key)) ++held_text_;
                if (held_text_ >= 2) {
                    echoing_ = true;
                    ++echoes_;
                    held_.clear();
                    held_text_ = 0;
                }
                return;
            }
            echoing_ = false;
            flush(emit);
        }
        if (const auto it = positions_.find(key); it != positions_.end() && !is_fence_line(key)) {
            at_ = it->second;
            held_.emplace_back(line);
            held_text_ = 1;
            return;
        }
        emit(line);
    }

    template <class Emit>
    void flush(Emit&& emit) {
        for (const auto& held : held_) emit(held);
        held_.clear();
        held_text_ = 0;
        at_.clear();
    }

    int echoes() const { return echoes_; }

private:
    std::vector<std::string> lines_;

    /// Looked up by string_view: no string is made per output line.
    struct Hash {
        using is_transparent = void;

        std::size_t operator()(std::string_view s) const {
            return std::hash<std::string_view>{}(s);
        }
    };

    std::unordered_map<std::string, std::vector<std::size_t>, Hash, std::equal_to<>> positions_;
    std::vector<std::size_t> at_;    ///< where in the prompt the current run may be
    std::vector<std::string> held_;  ///< a run not yet long enough to call an echo
    int held_text_ = 0;              ///< of them, the lines that are not fences
    bool echoing_ = false;
    int echoes_ = 0;
};

class GenericReader final : public OutputReader {
public:
    explicit GenericReader(std::string_view prompt)
        : echo_(prompt) {}

    void line(std::string_view text) override {
        echo_.feed(text, [this](std::string_view own) { keep(own); });
    }

    AgentReport finish(int exit_code) override {
        echo_.flush([this](std::string_view own) { keep(own); });
        if (echo_.echoes() > 0) {
            report_.warnings.push_back(
                "the output repeated the prompt; the repeated lines were not read for signals "
                "or questions");
        }
        settle_error(report_, {}, plain_, exit_code);
        return std::move(report_);
    }

private:
    void keep(std::string_view line) {
        plain_.note(line);
        show_progress(line);
        const bool tagged = line.find("<promise") != std::string_view::npos ||
                            line.find("</promise") != std::string_view::npos ||
                            line.find("<question") != std::string_view::npos ||
                            line.find("</question") != std::string_view::npos;
        const bool kept = tagged || in_promise_ || in_question_ || is_fence_line(line);
        in_promise_ = still_open(line, "<promise", "</promise>", in_promise_);
        in_question_ = still_open(line, "<question", "</question>", in_question_);
        if (!kept) return;
        auto& text = report_.message;
        if (text.size() + line.size() + 1 > max_kept_bytes && !text.empty()) {
            const auto cut = text.find('\n', text.size() / 2);
            text.erase(0, cut == std::string::npos ? text.size() : cut + 1);
            if (!dropped_) {
                report_.warnings.emplace_back(
                    "the output held more tagged text than the scan keeps (" +
                    std::to_string(max_kept_bytes >> 20) + " MB); the oldest part was not read");
                dropped_ = true;
            }
        }
        text.append(line.substr(0, std::min(line.size(), max_kept_bytes)));
        text.push_back('\n');
    }

    static constexpr std::size_t max_kept_bytes = 16u << 20;

    EchoFilter echo_;
    AgentReport report_;
    PlainLines plain_;
    bool in_promise_ = false;
    bool in_question_ = false;
    bool dropped_ = false;
};

}  // namespace

std::unique_ptr<OutputReader> make_generic_reader(std::string_view prompt) {
    return std::make_unique<GenericReader>(prompt);
}

}  // namespace board::dialect_detail
