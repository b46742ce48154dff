#include "orchestrator/prompt.hpp"

#include <board/codec.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace board::orchestrator {
namespace {

bool is_word_char(char c) {
    return (c >= 'a' && c <= 'z') || c == '.' || c == '_';
}

/// Calls `visit(name, begin, end)` for each `{name}` with a dotted lowercase name.
template <class Visit>
void for_each_placeholder(std::string_view text, Visit&& visit) {
    std::size_t pos = 0;
    while ((pos = text.find('{', pos)) != std::string_view::npos) {
        std::size_t end = pos + 1;
        while (end < text.size() && is_word_char(text[end])) ++end;
        if (end < text.size() && text[end] == '}' && end > pos + 1 && text[pos + 1] != '.') {
            visit(text.substr(pos + 1, end - pos - 1), pos, end + 1);
            pos = end + 1;
        } else {
            ++pos;
        }
    }
}

bool is_known(std::string_view name) {
    return std::find(known_placeholders.begin(), known_placeholders.end(), name) !=
           known_placeholders.end();
}

std::string author_of(const Note& note) {
    switch (note.from) {
        case ActorKind::human:
            return "human " + note.author;
        case ActorKind::agent:
            return "agent " + note.author;
        case ActorKind::system:
            return "board";
    }
    return "board";
}

/// A note as a Markdown bullet; continuation lines indented so the list stays one item each.
std::string bullet(const Note& note) {
    std::string out = "- " + author_of(note) + " (" + format_timestamp(note.at) + "): ";
    for (const char c : note.text) {
        out.push_back(c);
        if (c == '\n') out += "  ";
    }
    out.push_back('\n');
    return out;
}

std::string notes_text(const Ticket& t) {
    constexpr std::size_t shown = 30;  // the latest; the log keeps all of them
    if (t.notes.empty()) return "(none)\n";
    std::string out;
    if (t.notes.size() > shown) {
        out += "(" + std::to_string(t.notes.size() - shown) + " earlier notes not shown)\n";
    }
    for (std::size_t i = t.notes.size() > shown ? t.notes.size() - shown : 0; i < t.notes.size();
         ++i) {
        out += bullet(t.notes[i]);
    }
    return out;
}

std::string or_none(const std::string& text) {
    return text.empty() ? "(none yet)" : text;
}

struct SignalHelp {
    std::string_view name;
    std::string_view when;
};

// The protocol as data: the table agents read (spec/state-machine.md §4).
constexpr std::array signal_help{
    SignalHelp{"COMPLETE",
               "your artifact is written with `status: complete` and the phase is done"},
    SignalHelp{"APPROVAL_NEEDED: reason", "a human must approve before you go on"},
    SignalHelp{"REVIEW_REQUESTED: url", "a human must review something (a PR, a diff)"},
    SignalHelp{"CONTENT_REVIEW: what", "a human must check content you produced"},
    SignalHelp{"INPUT_NEEDED: question", "you cannot go on without an answer from a human"},
    SignalHelp{"ESCALATE: issue", "something is wrong beyond this ticket; a human must decide"},
    SignalHelp{"CHECKPOINT: summary", "a step is done; a human looks before the next run"},
    SignalHelp{"EJECT: reason", "an agent cannot do this ticket; hand it to a human"},
};

}  // namespace

std::optional<std::string> check_placeholders(std::string_view text) {
    std::optional<std::string> problem;
    for_each_placeholder(text, [&](std::string_view name, std::size_t begin, std::size_t) {
        if (problem || is_known(name)) return;
        const auto line =
            1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(begin), '\n');
        problem =
            "line " + std::to_string(line) + ": unknown placeholder {" + std::string{name} + "}";
    });
    return problem;
}

std::variant<PromptTemplates, std::string> load_prompt_templates(
    const std::filesystem::path& board_root) {
    PromptTemplates templates;
    for (const Status phase : all_statuses) {
        if (!is_agent_phase(phase)) continue;
        const auto index = static_cast<std::size_t>(phase);
        const auto file = board_root / "prompts" / (std::string{to_string(phase)} + ".md");
        std::error_code ec;
        if (std::filesystem::is_regular_file(file, ec)) {
            std::ifstream in(file, std::ios::binary);
            std::ostringstream text;
            text << in.rdbuf();
            if (!in) return file.string() + ": could not be read";
            templates.text[index] = std::move(text).str();
            templates.source[index] = file.string();
        } else {
            templates.text[index] = std::string{shipped_prompt(phase)};
            templates.source[index] = "shipped";
        }
        if (auto problem = check_placeholders(templates.text[index])) {
            return templates.source[index] + ": " + *problem;
        }
    }
    return templates;
}

std::string feedback_section(const Ticket& t) {
    std::string out = "## Human feedback\n\n";
    bool any = false;
    for (const Note& note : t.notes) {
        if (note.from != ActorKind::human || note.at < t.last_run_ended_at) continue;
        out += bullet(note);
        any = true;
    }
    if (!any) out += "(none)\n";
    return out;
}

std::string protocol_section(Status phase) {
    // Every tag below sits inside a fenced block, where the board never reads one: an agent
    // that echoes its prompt hands in none of these examples.
    std::string out =
        "End your final message with exactly one signal on its own line, outside any code "
        "block. The signals (write the one you mean without the surrounding fence):\n\n```\n";
    for (const auto& s : signal_help) {
        out += "<promise>" + std::string{s.name} + "</promise>\n";
    }
    out += "```\n\n";
    for (const auto& s : signal_help) {
        out += "- " + std::string{s.name.substr(0, s.name.find(':'))} + ": " + std::string{s.when} +
               "\n";
    }
    out +=
        "\nThe last handoff signal counts (any but COMPLETE); with none, COMPLETE; with no "
        "signal at all the run counts as one iteration and you are run again.";
    if (phase == Status::implementing) {
        out += " A handoff from this phase moves the ticket to review first.";
    }
    out +=
        "\n\nTo ask a structured question instead, end with a block like this one (again "
        "without the fence):\n\n```\n"
        "<question>{\"question\": \"Which database?\", \"type\": \"blocking\", "
        "\"responseType\": \"choice\", \"options\": [{\"id\": \"a\", \"label\": \"SQLite\", "
        "\"value\": \"sqlite\"}], \"timeoutMinutes\": 30, \"defaultResponse\": \"sqlite\"}"
        "</question>\n```\n\n"
        "`type` is blocking, non_blocking, approval or error_recovery; `responseType` is text, "
        "choice, boolean or approval. A blocking question stops the ticket until a human "
        "answers; the answer reaches you as human feedback in the next run.\n";
    return out;
}

std::string render_prompt(std::string_view template_text, const PromptInput& in) {
    const Ticket& t = *in.ticket;
    auto value_of = [&](std::string_view name) -> std::string {
        if (name == "ticket.id") return t.id;
        if (name == "ticket.title") return t.title;
        if (name == "ticket.intent") return t.description.empty() ? t.title : t.description;
        if (name == "ticket.type") return std::string{to_string(t.type)};
        if (name == "ticket.priority") return std::to_string(t.priority);
        if (name == "ticket.dir") return in.ticket_dir.string();
        if (name == "artifact.path") return in.artifact_path.string();
        if (name == "artifact.research") return or_none(in.research_text);
        if (name == "artifact.plan") return or_none(in.plan_text);
        if (name == "artifact.unfinished")
            return in.unfinished_text.empty()
                       ? std::string{"(none: start fresh)"}
                       : "An earlier run left this unfinished (`status: in-progress`). It is "
                         "already in " +
                             in.artifact_path.string() +
                             ": continue it rather than starting over.\n\n" + in.unfinished_text;
        if (name == "notes") return notes_text(t);
        if (name == "feedback") return feedback_section(t);
        if (name == "protocol") return protocol_section(in.phase);
        return "{" + std::string{name} + "}";
    };
    std::string out;
    out.reserve(template_text.size() + 4096);
    std::size_t copied = 0;
    for_each_placeholder(template_text,
                         [&](std::string_view name, std::size_t begin, std::size_t end) {
                             out.append(template_text.substr(copied, begin - copied));
                             out += value_of(name);
                             copied = end;
                         });
    out.append(template_text.substr(copied));
    return out;
}

}  // namespace board::orchestrator
