#include "cli/reading.hpp"

#include "cli/render.hpp"

#include <board/app.hpp>
#include <board/codec.hpp>
#include <board/event_log.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace board::cli {

std::variant<Session, int> reading(const GlobalOptions& options, std::string_view command) {
    return Session::open(options, command, false);
}

std::string waited(UnixMillis since) {
    const auto seconds = std::max<UnixMillis>(0, (wall_clock_now() - since) / 1000);
    if (seconds < 60) return fmt::format("{}s", seconds);
    if (seconds < 3600) return fmt::format("{}m", seconds / 60);
    if (seconds < 86400) return fmt::format("{}h {}m", seconds / 3600, seconds % 3600 / 60);
    return fmt::format("{}d {}h", seconds / 86400, seconds % 86400 / 3600);
}

std::string request_text(const Ticket& t) {
    const auto request = app::request_of(t);
    if (!request) return {};
    std::string out =
        fmt::format("  awaiting {} for {}", to_string(request->kind), waited(request->since));
    if (!request->asked_by.empty()) out += fmt::format(" · asked by {}", request->asked_by);
    for (const auto& chase : app::handoff_chases(t)) out += " · " + chase;
    out += "\n";
    if (!request->words.empty())
        out += fmt::format("  │ {}\n", printable_block(request->words, "  │ "));
    for (const auto& q : request->questions) {
        out += fmt::format("  ? {}.{} ({}): {}\n",
                           t.id,
                           q.id,
                           to_string(q.kind),
                           printable_block(q.question, "    "));
        for (const auto& option : q.options)
            out += fmt::format(
                "      {} = {}{}\n",
                printable(option.id),
                printable(option.label.empty() ? option.value : option.label),
                q.default_response && *q.default_response == option.id ? "  (the default)" : "");
    }
    if (request->artifact)
        out += fmt::format("  {} ({}): {}\n",
                           request->artifact->path,
                           to_string(request->artifact->status),
                           printable(request->artifact->summary));
    for (const auto& command : request->commands) out += fmt::format("  → {}\n", command);
    return out;
}

}  // namespace board::cli
