// scan_signals: the one signal of a run (spec/state-machine.md §4).

#include "agent_output/markup.hpp"
#include "agent_output/text.hpp"

#include <board/agent_output.hpp>

#include <algorithm>
#include <cctype>

namespace board {
namespace {

using agent_output::LineCounter;
using agent_output::quoted;
using agent_output::TagEvent;
using agent_output::trim;
using agent_output::Warnings;

std::optional<Signal> signal_named(std::string_view name) {
    if (name == "CONTENT REVIEW") return Signal::content_review;
    return parse<Signal>(name);
}

/// A hint for the common mistake of a lowercase or mixed-case name.
std::string case_hint(std::string_view name) {
    std::string upper{name.substr(0, 32)};
    std::transform(upper.begin(), upper.end(), upper.begin(), [](char c) {
        return static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    });
    if (upper == name || !signal_named(upper)) return {};
    return " (names are case-sensitive: " + upper + ")";
}

std::string line_text(LineCounter& lines, std::size_t at) {
    return std::to_string(lines.line_of(at));
}

std::string context_of(std::string_view raw) {
    std::string out;
    const std::string_view text = trim(raw);
    const std::size_t consumed = agent_output::append_utf8(out, text, max_signal_context_bytes);
    if (consumed < text.size()) out += truncation_marker;
    return out;
}

}  // namespace

SignalScan scan_signals(std::string_view output) {
    SignalScan result;
    Warnings warnings{result.warnings};
    LineCounter lines{output};
    agent_output::TagScanner scanner{output, "promise"};

    // Remember where the chosen tag's context is and copy it once at the end, so a long
    // output with many signals costs no more than one context.
    std::optional<std::string_view> last_handoff;
    std::optional<std::string_view> last_complete;

    while (const auto event = scanner.next()) {
        const std::size_t at = event->at;
        switch (event->kind) {
            case TagEvent::Kind::unterminated:
                warnings.add(
                    [&] { return "unterminated <promise> at line " + line_text(lines, at); });
                continue;
            case TagEvent::Kind::nested:
                warnings.add([&] {
                    return "unterminated <promise> at line " + line_text(lines, at) +
                           " (another <promise> starts before its </promise>)";
                });
                continue;
            case TagEvent::Kind::stray_close:
                warnings.add([&] { return "stray </promise> at line " + line_text(lines, at); });
                continue;
            case TagEvent::Kind::tag:
                break;
        }

        const std::string_view body = trim(event->body);
        const std::size_t colon = body.find(':');
        const std::string_view name = trim(body.substr(0, colon));
        const std::string_view context =
            colon == std::string_view::npos ? std::string_view{} : body.substr(colon + 1);
        if (name.empty()) {
            warnings.add([&] { return "empty <promise> at line " + line_text(lines, at); });
            continue;
        }
        const auto signal = signal_named(name);
        if (!signal) {
            warnings.add([&] {
                return "unknown signal " + quoted(name) + " at line " + line_text(lines, at) +
                       case_hint(name);
            });
            continue;
        }
        if (std::find(result.distinct.begin(), result.distinct.end(), *signal) ==
            result.distinct.end()) {
            result.distinct.push_back(*signal);
        }
        if (*signal == Signal::complete) {
            last_complete = context;
        } else {
            last_handoff = context;
            result.signal = *signal;
        }
    }

    // A handoff anywhere beats COMPLETE: ambiguity must never skip a human (spec §4).
    if (last_handoff) {
        result.context = context_of(*last_handoff);
    } else if (last_complete) {
        result.signal = Signal::complete;
        result.context = context_of(*last_complete);
    }
    warnings.finish();
    return result;
}

}  // namespace board
