// The JSON forms of the application layer's results: what `board --json` prints and what the
// HTTP API answers are the same bytes.

#include "codec/json_writer.hpp"
#include "support/pieces_in_order.hpp"

#include <board/app.hpp>
#include <board/codec.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace board::app {
namespace {

using codec_detail::append_json_string;

void append_string_list(std::string& out, const std::vector<std::string>& items) {
    out += '[';
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += ',';
        append_json_string(out, items[i]);
    }
    out += ']';
}

void append_key(std::string& out, std::string_view key) {
    out += ",\"";
    out += key;
    out += "\":";
}

void append_field(std::string& out, std::string_view key, long long value) {
    out += key;
    const fmt::format_int text{value};
    out.append(text.data(), text.size());
}

void append_timestamp_field(std::string& out, std::string_view key, UnixMillis at) {
    out += key;
    out += '"';
    out += format_timestamp(at);
    out += '"';
}

}  // namespace

void append_entry_json(std::string& out, const Catalog& catalog, const CatalogEntry& entry) {
    const TicketSummary& t = entry.ticket;
    out += "{\"id\":";
    append_json_string(out, t.id);
    append_key(out, "title");
    append_json_string(out, t.title);
    append_key(out, "type");
    append_json_string(out, to_string(t.type));
    append_field(out, ",\"priority\":", t.priority);
    append_key(out, "labels");
    append_string_list(out, t.labels);
    append_key(out, "parent");
    append_json_string(out, t.parent);
    append_key(out, "blocked_by");
    append_string_list(out, t.blocked_by);
    const Status shown = catalog.shown_status(t);
    append_key(out, "status");
    append_json_string(out, to_string(shown));
    if (t.resolution) {
        append_key(out, "resolution");
        append_json_string(out, to_string(*t.resolution));
    }
    if (t.awaiting) {
        append_key(out, "awaiting");
        append_json_string(out, to_string(*t.awaiting));
        append_key(out, "handoff");
        append_json_string(out, to_string(t.handoff));
        if (t.awaiting_since != 0)
            append_timestamp_field(out, ",\"awaiting_since\":", t.awaiting_since);
        if (t.reminders != 0) append_field(out, ",\"reminders\":", t.reminders);
        if (t.escalated_at != 0) {
            append_key(out, "escalated_to");
            append_string_list(out, t.escalated_to);
        }
    }
    if (t.requires_) {
        append_key(out, "requires");
        append_json_string(out, to_string(*t.requires_));
    }
    if (t.run) {
        append_key(out, "run");
        out += "{\"id\":";
        append_json_string(out, t.run->id);
        out += ",\"phase\":\"";
        out += to_string(t.run->phase);
        out += '"';
        append_timestamp_field(out, ",\"started_at\":", t.run->started_at);
        out += '}';
    }
    const bool blocked = !catalog.blockers_done(t);
    out += blocked ? ",\"blocked\":true" : ",\"blocked\":false";
    append_field(out, ",\"phase_attempts\":", t.phase_attempts);
    append_field(out, ",\"phase_iterations\":", t.phase_iterations);
    // A double as fmt's "{}" writes it (shortest round trip), into a stack buffer.
    std::array<char, 48> number{};
    const auto written = fmt::format_to_n(number.data(), number.size(), "{}", t.cost_usd);
    out += ",\"cost_usd\":";
    out.append(number.data(), std::min(written.size, number.size()));
    append_field(out, ",\"runs_total\":", t.runs_total);
    append_field(out, ",\"notes_count\":", entry.notes);
    append_field(out, ",\"questions_pending\":", entry.questions_pending);
    if (t.type == TicketType::epic) {
        const EpicProgress progress = catalog.epic_progress(t.id);
        append_field(out, ",\"children\":", progress.children);
        append_field(out, ",\"children_done\":", progress.done);
    }
    append_timestamp_field(out, ",\"created_at\":", t.created_at);
    append_timestamp_field(out, ",\"updated_at\":", t.updated_at);
    append_field(out, ",\"seq\":", t.seq);
    out += '}';
}

void write_json(const Picked& picked, const std::function<void(std::string_view)>& sink) {
    // Handed on in pieces of this many entries: a big board's list held whole was most of the
    // memory (and the page faults) of a `list --json`.
    constexpr std::size_t piece = 256;
    std::optional<Standings> standings;
    if (picked.policy) standings.emplace(*picked.catalog, *picked.policy, picked.now);
    const std::size_t count = picked.entries.size();
    const auto write_piece = [&](std::size_t p, std::string& out) {
        if (p == 0) out += '[';
        const std::size_t end = std::min(count, (p + 1) * piece);
        for (std::size_t i = p * piece; i < end; ++i) {
            if (i > 0) out += ',';
            append_entry_json(out, *picked.catalog, *picked.entries[i]);
            // The entry's closing brace comes off: what follows goes inside it.
            if (standings) {
                out.pop_back();
                out += ",\"standing\":";
                out += standing_json(standings->of(picked.entries[i]->ticket));
                out += '}';
            }
            if (i < picked.requests.size() && picked.requests[i]) {
                out.pop_back();
                out += ",\"request\":";
                out += request_json(*picked.requests[i]);
                out += '}';
            }
        }
        if (end == count) out += "]\n";
    };
    pieces_in_order(std::max<std::size_t>(1, (count + piece - 1) / piece), write_piece, sink);
}

std::string to_json(const Picked& picked) {
    // Room for a typical entry with its standing (board_gen's average is about 610 bytes).
    std::string whole;
    whole.reserve(picked.entries.size() * 640 + 4);
    write_json(picked, [&](std::string_view piece) { whole += piece; });
    return whole;
}

std::string to_json(const Written& written) {
    return encode_ticket(written.ticket) + "\n";
}

std::string to_json(const TicketView& view) {
    std::string out;
    if (!view.epic) {
        out = encode_ticket(view.ticket);
    } else {
        auto json = ticket_to_json(view.ticket);
        json["children"] = view.epic->children;
        json["children_done"] = view.epic->done;
        if (view.done_by_children) json["status"] = "done";
        out = boost::json::serialize(json);
    }
    if (view.standing) {
        out.pop_back();  // the closing brace: the standing goes inside
        out += ",\"standing\":";
        out += standing_json(*view.standing);
        out += '}';
    }
    return out + "\n";
}

std::string replay_step_json(const TicketView& view) {
    boost::json::object out{{"seq", view.ticket.seq},
                            {"last_seq", view.events.empty() ? 0 : view.events.back().seq},
                            {"ticket", ticket_to_json(view.ticket)}};
    if (view.folded > 0) out["event"] = event_to_json(view.events[view.folded - 1]);
    return boost::json::serialize(out) + "\n";
}

std::string to_json(const Asked& asked) {
    boost::json::array out;
    for (const Ticket& ticket : asked.tickets) {
        const auto ticket_json = ticket_to_json(ticket);
        const auto& questions = ticket_json.at("questions").as_array();
        for (std::size_t i = 0; i < ticket.questions.size() && i < questions.size(); ++i) {
            if (asked.pending_only && ticket.questions[i].status != QuestionStatus::pending)
                continue;
            boost::json::object item = questions[i].as_object();
            item["id"] = fmt::format("{}.{}", ticket.id, ticket.questions[i].id);
            item["ticket"] = ticket.id;
            out.push_back(std::move(item));
        }
    }
    return boost::json::serialize(out) + "\n";
}

std::string to_json(const ImportReport& report) {
    boost::json::array tickets, unmapped, not_kept;
    for (const auto& i : report.imported)
        tickets.push_back(boost::json::object{
            {"tick", i.tick}, {"id", i.id}, {"title", i.title}, {"status", i.status}});
    for (const auto& u : report.unmapped)
        unmapped.push_back(boost::json::object{
            {"tick", u.tick}, {"field", u.field}, {"value", u.value}, {"why", u.why}});
    for (const auto& field : report.fields_not_kept) not_kept.emplace_back(field);
    return boost::json::serialize(boost::json::object{{"source", report.source.string()},
                                                      {"dry_run", report.dry_run},
                                                      {"imported", report.imported.size()},
                                                      {"tickets", std::move(tickets)},
                                                      {"unmapped", std::move(unmapped)},
                                                      {"not_kept", std::move(not_kept)}}) +
           "\n";
}

std::string runs_json(const std::vector<RunView>& runs) {
    boost::json::array out;
    for (const auto& r : runs) {
        boost::json::object o;
        o["run"] = r.id;
        o["phase"] = to_string(r.phase);
        o["attempt"] = r.attempt;
        o["iteration"] = r.iteration;
        if (!r.branch.empty()) o["branch"] = r.branch;
        o["started_at"] = format_timestamp(r.started_at);
        o["end"] = r.end.empty() ? boost::json::value(nullptr) : boost::json::value(r.end);
        if (!r.end.empty()) o["ended_at"] = format_timestamp(r.ended_at);
        o["signal"] =
            r.signal ? boost::json::value(to_string(*r.signal)) : boost::json::value(nullptr);
        o["exit"] = r.exit_code;
        o["timed_out"] = r.timed_out;
        o["error"] = r.error;
        o["cost_usd"] = r.cost_usd;
        o["duration_ms"] = r.duration_ms;
        o["prompt"] = r.prompt_file.string();
        o["log"] = r.log_file.string();
        out.push_back(std::move(o));
    }
    return boost::json::serialize(out) + "\n";
}

}  // namespace board::app
