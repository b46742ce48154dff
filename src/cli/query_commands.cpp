// `list`, `ready`, `next`, `questions`: board-wide reads through the catalog.

#include "cli/commands.hpp"
#include "cli/history.hpp"
#include "cli/render.hpp"

#include <board/board_config.hpp>
#include <board/codec.hpp>
#include <board/event_log.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <unistd.h>

namespace fs = std::filesystem;

namespace board::cli {
namespace {

CommandOutcome refused(int code, std::string message) {
    return {code, {}, std::move(message), {}};
}

/// A filter naming an epic (`next EPIC`, `ready EPIC`, `list --parent`) that names none
/// would list nothing and look like an empty board: it is refused, saying what it names.
std::optional<CommandOutcome> refuse_unless_epic(CatalogLoad& load,
                                                 const std::string& id,
                                                 std::string_view command) {
    if (id.empty()) return std::nullopt;
    auto why = load.catalog.epic_error(id);
    if (!why) return std::nullopt;
    return CommandOutcome{1, {}, fmt::format("{}: {}", command, *why), std::move(load.warnings)};
}

template <class Enum>
std::optional<std::vector<Enum>> parse_list(const std::string& text) {
    std::vector<Enum> out;
    for (const auto& name : split_list(text)) {
        const auto value = parse<Enum>(name);
        if (!value) return std::nullopt;
        out.push_back(*value);
    }
    return out;
}

/// The loaded board, or the outcome to return. Warnings (tickets left out) go to stderr.
struct Loaded {
    std::unique_ptr<CatalogLoad> owned;  ///< empty when the board is left to the process exit
    CatalogLoad* load = nullptr;
    CommandOutcome failure;
};

/// A one-shot `board` process leaves its loaded board to the exit: the kernel takes the
/// memory back in one go, where destroying 10,000 tickets one by one was 2 ms of a
/// `board list`. Still reachable from here, so no leak checker minds.
CatalogLoad* keep_until_exit(std::unique_ptr<CatalogLoad> load) {
    static auto* const kept = new std::vector<std::unique_ptr<CatalogLoad>>;
    kept->push_back(std::move(load));
    return kept->back().get();
}

Loaded load_board(const Context& ctx, std::string_view command) {
    auto result = load_catalog(ctx.board);
    if (auto* error = std::get_if<CatalogError>(&result))
        return {nullptr, nullptr, refused(3, fmt::format("{}: {}", command, error->message))};
    auto load = std::make_unique<CatalogLoad>(std::move(std::get<CatalogLoad>(result)));
    if (ctx.one_shot) {
        CatalogLoad* kept = keep_until_exit(std::move(load));
        return {nullptr, kept, {}};
    }
    CatalogLoad* owned = load.get();
    return {std::move(load), owned, {}};
}

std::optional<Ticket> full_ticket(const Context& ctx,
                                  const std::string& id,
                                  std::vector<std::string>& warnings) {
    auto loaded = load_ticket(ctx.board / "tickets" / id);
    if (auto* error = std::get_if<LogError>(&loaded)) {
        warnings.push_back(error->message);
        return std::nullopt;
    }
    return std::move(std::get<board::Loaded>(loaded).ticket);
}

/// The commands a person would type next for a ticket that awaits them.
std::string hint_for(const Ticket& t) {
    if (!t.awaiting) return {};
    if (t.handoff == Handoff::question) {
        for (const auto& q : t.questions)
            if (q.status == QuestionStatus::pending)
                return fmt::format("  → board answer {}.{} VALUE\n", t.id, q.id);
    }
    if (*t.awaiting == Awaiting::input)
        return fmt::format(
            "  → board approve {} \"the answer\"   or   board reject {} \"why not\"\n", t.id, t.id);
    return fmt::format(
        "  → board approve {} [NOTE]   or   board reject {} \"feedback\"\n", t.id, t.id);
}

}  // namespace

std::optional<std::vector<Awaiting>> parse_awaiting_list(const std::string& text) {
    return parse_list<Awaiting>(text);
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
        const auto comma = std::min(text.find(',', start), text.size());
        std::string_view item = std::string_view{text}.substr(start, comma - start);
        const auto first = item.find_first_not_of(" \t");
        if (first != std::string_view::npos) {
            item = item.substr(first, item.find_last_not_of(" \t") - first + 1);
            out.emplace_back(item);
        }
        start = comma + 1;
    }
    return out;
}

std::optional<std::vector<Status>> parse_status_list(const std::string& text) {
    return parse_list<Status>(text);
}

bool is_valid_actor_name(const std::string& name) {
    // `--as agent:review` would sign `human:agent:review`: human, but read at a glance as not.
    return name.find(':') == std::string::npos && is_valid_actor(Actor{ActorKind::human, name});
}

CommandOutcome list_tickets(const Context& ctx, const ListFilter& filter) {
    auto board = load_board(ctx, "list");
    if (!board.load) return board.failure;
    const Catalog& catalog = board.load->catalog;
    if (auto refusal = refuse_unless_epic(*board.load, filter.parent, "list --parent"))
        return *std::move(refusal);
    const auto picked = catalog.list(filter);
    CommandOutcome out{
        0,
        ctx.json ? entries_json(catalog, picked) : entries_table(catalog, picked, ctx.colour),
        {},
        std::move(board.load->warnings)};
    return out;
}

CommandOutcome ready_tickets(const Context& ctx, const NextFilter& filter) {
    auto board = load_board(ctx, "ready");
    if (!board.load) return board.failure;
    auto config = load_board_config(ctx.board / "board.yaml");
    if (!config) return refused(3, fmt::format("ready: board.yaml: {}", config.error().message));
    const Catalog& catalog = board.load->catalog;
    if (auto refusal = refuse_unless_epic(*board.load, filter.epic, "ready"))
        return *std::move(refusal);
    const auto picked = catalog.ready(config.value().policy, filter);
    return {0,
            ctx.json ? entries_json(catalog, picked) : entries_table(catalog, picked, ctx.colour),
            {},
            std::move(board.load->warnings)};
}

CommandOutcome next_ticket(const Context& ctx, const NextRequest& request) {
    auto board = load_board(ctx, "next");
    if (!board.load) return board.failure;
    const Catalog& catalog = board.load->catalog;
    if (auto refusal = refuse_unless_epic(*board.load, request.filter.epic, "next"))
        return *std::move(refusal);
    const CatalogEntry* chosen = nullptr;
    if (request.human) {
        chosen = catalog.next_for_human(request.types, request.filter);
    } else {
        auto config = load_board_config(ctx.board / "board.yaml");
        if (!config) return refused(3, fmt::format("next: board.yaml: {}", config.error().message));
        chosen = catalog.next_for_agent(config.value().policy, request.filter);
    }
    auto warnings = std::move(board.load->warnings);
    if (!chosen) {
        const std::string why =
            request.human ? "nothing awaits a human" : "nothing for the agent now";
        return {1,
                ctx.json ? "null\n" : std::string{},
                fmt::format("next: {}", why),
                std::move(warnings)};
    }
    auto ticket = full_ticket(ctx, chosen->ticket.id, warnings);
    if (!ticket)
        return {3, {}, fmt::format("next: cannot read {}", chosen->ticket.id), std::move(warnings)};
    if (ctx.json) return {0, encode_ticket(*ticket) + "\n", {}, std::move(warnings)};
    std::string out = fmt::format("{}  {}\n  {} · {} · priority {}\n",
                                  ticket->id,
                                  printable(ticket->title),
                                  describe_state(*ticket),
                                  to_string(ticket->type),
                                  ticket->priority);
    if (!ticket->description.empty())
        out += fmt::format("  {}\n", printable_block(ticket->description, "  "));
    out += hint_for(*ticket);
    return {0, std::move(out), {}, std::move(warnings)};
}

CommandOutcome list_questions(const Context& ctx, bool pending_only) {
    auto board = load_board(ctx, "questions");
    if (!board.load) return board.failure;
    auto warnings = std::move(board.load->warnings);
    boost::json::array json;
    Table table;
    table.header = {"QUESTION", "STATUS", "KIND", "ANSWER", "TEXT"};
    for (const auto& entry : board.load->catalog.entries()) {
        if ((pending_only ? entry.questions_pending : entry.questions_total) == 0) continue;
        const auto ticket = full_ticket(ctx, entry.ticket.id, warnings);
        if (!ticket) continue;
        const auto ticket_json = ticket_to_json(*ticket);
        const auto& questions = ticket_json.at("questions").as_array();
        for (std::size_t i = 0; i < ticket->questions.size() && i < questions.size(); ++i) {
            const Question& q = ticket->questions[i];
            if (pending_only && q.status != QuestionStatus::pending) continue;
            const std::string qid = fmt::format("{}.{}", ticket->id, q.id);
            if (ctx.json) {
                boost::json::object item = questions[i].as_object();
                item["id"] = qid;
                item["ticket"] = ticket->id;
                json.push_back(std::move(item));
                continue;
            }
            std::string answer_type{to_string(q.response_type)};
            if (q.response_type == ResponseType::choice) {
                std::vector<std::string> ids;
                for (const auto& o : q.options) ids.push_back(o.id);
                answer_type = fmt::format("choice: {}", fmt::join(ids, "|"));
            }
            std::string text = q.question;
            if (q.status == QuestionStatus::answered) text += fmt::format("  → {}", q.answer);
            table.rows.push_back({qid,
                                  std::string{to_string(q.status)},
                                  std::string{to_string(q.kind)},
                                  std::move(answer_type),
                                  std::move(text)});
            table.colours.push_back(
                {"", q.status == QuestionStatus::pending ? "1;33" : "2", "", "", ""});
        }
    }
    if (ctx.json) return {0, boost::json::serialize(json) + "\n", {}, std::move(warnings)};
    return {0, render(table, ctx.colour), {}, std::move(warnings)};
}

}  // namespace board::cli
