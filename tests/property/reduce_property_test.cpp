// A seeded property test over random event sequences. For tens of thousands of sequences:
// reduce() never throws or crashes (ASan/UBSan watch in CI); a refused event changes nothing;
// and every accepted sequence, encoded to the log format and decoded again, folds to the very
// same ticket, whose snapshot JSON also round-trips. The seed is printed on failure.

#include "catalog/index_file.hpp"

#include <board/app.hpp>
#include <board/catalog.hpp>
#include <board/codec.hpp>
#include <board/reduce.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstdlib>
#include <random>
#include <string>

using namespace board;

namespace {

class RandomEvents {
public:
    explicit RandomEvents(std::uint64_t seed)
        : rng_(seed) {}

    /// An event for `t`: often one that fits its state, sometimes anything at all.
    Event next(const Ticket& t) {
        Event e;
        e.seq = chance(97) ? t.seq + 1 : pick(0, 3) + t.seq;
        e.id = "ev" + std::to_string(counter_++);
        e.at = now_ += pick(0, 40) * 60'000;  // minutes apart, so question timeouts come due
        e.by = actor();
        e.payload = t.id.empty() && chance(90) ? Payload{created()} : payload(t);
        // Work on a branch, handed to a person and approved: the way to a ticket that owes
        // its shipping.
        if (!t.branch.empty() && !t.run && !t.awaiting && t.status != Status::done && chance(10)) {
            e.by = Actor{ActorKind::human, "ana"};
            Updated handed;
            handed.awaiting = std::optional<Awaiting>{Awaiting::work};
            e.payload = handed;
        }
        if (!t.branch.empty() && t.awaiting && chance(60)) {
            e.by = Actor{ActorKind::human, "ana"};
            e.payload = VerdictGiven{Verdict::approved, "feedback"};
        }
        // A handoff the board reminds of, or escalates: mostly by the board, for the kind the
        // ticket awaits, with the next reminder's number.
        if (t.awaiting && chance(8)) {
            e.by = chance(90) ? Actor{ActorKind::system, {}} : actor();
            const Awaiting kind = chance(90) ? *t.awaiting : any<Awaiting>(7);
            e.payload =
                chance(60) ? Payload{HandoffReminded{kind, t.reminders + (chance(90) ? 1 : 2)}}
                           : Payload{HandoffEscalated{kind,
                                                      chance(80) ? std::vector<std::string>{"carol"}
                                                                 : std::vector<std::string>{}}};
        }
        // A ticket that owes its shipping is a state worth leaving by each of its ways.
        if (t.ship_owed && chance(60)) {
            e.by = chance(90) ? Actor{ActorKind::system, {}} : actor();
            e.payload = chance(50) ? Payload{Shipped{any<ShipMethod>(3), t.branch, text()}}
                                   : Payload{ShipFailed{t.branch, text()}};
        }
        return e;
    }

private:
    int pick(int lo, int hi) { return std::uniform_int_distribution<int>{lo, hi}(rng_); }

    bool chance(int percent) { return pick(1, 100) <= percent; }

    template <class T, std::size_t N>
    T one_of(const std::array<T, N>& values) {
        return values[static_cast<std::size_t>(pick(0, static_cast<int>(N) - 1))];
    }

    template <class Enum>
    Enum any(int count) {
        return static_cast<Enum>(pick(0, count - 1));
    }

    std::string text() {
        static constexpr std::array<const char*, 6> words{
            "retry", "", "naïve ünïcode ✓", "line\nbreak", "quote \" and \\ slash", "tab\there"};
        return one_of(words);
    }

    Actor actor() {
        switch (pick(0, 3)) {
            case 0:
                return {ActorKind::agent, std::string{to_string(any<Status>(7))}};
            case 1:
                return {ActorKind::system, {}};
            default:
                return {ActorKind::human, chance(50) ? "ana" : "bo"};
        }
    }

    std::optional<Awaiting> maybe_awaiting() {
        return chance(50) ? std::optional{any<Awaiting>(7)} : std::nullopt;
    }

    std::string id() { return chance(90) ? "PROJ-" + std::to_string(pick(1, 5)) : "bad id"; }

    Created created() {
        Created c;
        c.ticket = id();
        c.title = chance(95) ? "Add retry" : "";
        c.description = text();
        c.kind = any<TicketType>(5);
        c.priority = pick(-1, 5);
        if (chance(30)) c.labels = {"backend", text()};
        if (chance(20)) c.parent = id();
        if (chance(20)) c.blocked_by = {id()};
        if (chance(20)) c.requires_ = maybe_awaiting();
        if (chance(10)) c.awaiting = maybe_awaiting();
        c.manual = chance(5);
        return c;
    }

    std::string run_id(const Ticket& t) {
        if (t.run && chance(85)) return t.run->id;
        return "r" + std::to_string(pick(1, 30));
    }

    std::string question_id(const Ticket& t) {
        if (!t.questions.empty() && chance(80))
            return t
                .questions[static_cast<std::size_t>(
                    pick(0, static_cast<int>(t.questions.size()) - 1))]
                .id;
        return "q" + std::to_string(pick(1, 6));
    }

    RunPolicy policy() {
        RunPolicy p;
        p.gate = any<Gate>(3);
        p.max_iterations = pick(1, 4);
        p.max_attempts = pick(1, 3);
        p.max_cost_usd = chance(50) ? 0.0 : 0.05;
        p.review_agent = chance(50);
        return p;
    }

    Payload run_finished(const Ticket& t) {
        RunFinished r;
        r.run = run_id(t);
        r.exit_code = chance(80) ? 0 : pick(1, 137);
        r.timed_out = chance(5);
        if (chance(5)) r.error = "could not start: " + text();
        r.duration_ms = pick(0, 100000);
        r.cost_usd = pick(0, 3) * 0.0125;
        if (chance(50)) r.session = "sess-" + std::to_string(pick(1, 9));
        if (chance(80)) r.signal = any<Signal>(9);
        r.context = text();
        return r;
    }

    Payload question() {
        QuestionAsked q;
        q.question_id = "q" + std::to_string(pick(1, 6));
        q.question = chance(95) ? "Which backend?" : "";
        q.kind = any<QuestionKind>(4);
        q.response_type = any<ResponseType>(4);
        if (q.response_type == ResponseType::choice && chance(90))
            q.options = {{"a", "SQLite", "sqlite", ""}, {"b", "Postgres", "postgres", text()}};
        if (chance(50)) q.timeout_minutes = pick(-5, 2000);
        if (chance(40)) {
            static constexpr std::array<const char*, 5> defaults{
                "true", "approve", "sqlite", "x", ""};
            q.default_response = one_of(defaults);
        }
        return q;
    }

    Payload answer(const Ticket& t) {
        static constexpr std::array<const char*, 7> values{
            "true", "false", "approve", "reject", "b", "postgres", ""};
        if (chance(15)) return QuestionCancelled{question_id(t), text()};
        return QuestionAnswered{question_id(t), one_of(values), text()};
    }

    Payload update() {
        Updated u;
        if (chance(30)) u.title = chance(90) ? "Retitled" : "";
        if (chance(20)) u.description = text();
        if (chance(20)) u.priority = pick(-1, 5);
        if (chance(15)) u.labels = std::vector<std::string>{"a", text()};
        if (chance(15)) u.parent = chance(30) ? "" : id();
        if (chance(15)) u.blocked_by = std::vector<std::string>{id()};
        if (chance(20)) u.requires_ = maybe_awaiting();
        if (chance(30)) u.awaiting = maybe_awaiting();
        return u;
    }

    Payload artifact(const Ticket& t) {
        ArtifactRecorded a;
        const auto phase_artifact = artifact_of(t.status);
        a.kind = phase_artifact && chance(80) ? *phase_artifact : any<ArtifactKind>(4);
        a.path = chance(95) ? std::string{to_string(a.kind)} + ".md" : "../escape.md";
        a.status = chance(70) ? ArtifactStatus::complete : any<ArtifactStatus>(3);
        a.summary = text();
        a.sha256 = chance(90) ? std::string(64, 'c') : "zz";
        if (chance(50)) a.gate = any<Gate>(3);
        return a;
    }

    Payload payload(const Ticket& t) {
        switch (pick(0, 19)) {
            case 0:
                return created();
            case 1:
            case 2:
                return RunStarted{run_id(t),
                                  chance(70) ? t.status : any<Status>(7),
                                  1,
                                  1,
                                  policy(),
                                  chance(40) ? "board/" + t.id : std::string{}};
            case 3:
            case 4:
                return run_finished(t);
            case 5:
                return RunInterrupted{run_id(t), text()};
            case 6:
                return artifact(t);
            case 7:
                return NoteAdded{text()};
            case 8:
            case 9:
                return VerdictGiven{any<Verdict>(2), chance(80) ? "feedback" : ""};
            case 10:
                return question();
            case 11:
                return answer(t);
            case 12:
                return QuestionTimedOut{question_id(t)};
            case 13:
                return update();
            case 14:
                return Started{};
            case 15:
                return Moved{any<Status>(7), chance(90) ? "reason" : ""};
            case 16:
                return chance(50) ? Payload{Cancelled{text()}} : Payload{Reopened{text()}};
            case 17:
                return Forked{t.id, t.seq, "PROJ-" + std::to_string(pick(10, 20))};
            case 18:
                return Shipped{any<ShipMethod>(3), chance(90) ? t.branch : "board/X", text()};
            default:
                return ShipFailed{chance(90) ? t.branch : "board/X", text()};
        }
    }

    std::mt19937_64 rng_;
    UnixMillis now_ = 1'795'000'000'000;
    std::uint64_t counter_ = 0;
};

std::uint64_t base_seed() {
    const char* env = std::getenv("BOARD_PROPERTY_SEED");
    return env ? std::strtoull(env, nullptr, 10) : 20261123;
}

}  // namespace

TEST_CASE("random logs: reduce is total, and encode/decode/fold gives the same ticket",
          "[property]") {
    constexpr std::uint64_t sequences = 20'000;
    constexpr int max_length = 60;
    const std::uint64_t seed = base_seed();
    std::size_t accepted_total = 0, refused_total = 0;
    std::array<std::size_t, std::variant_size_v<Payload>> accepted_by_type{};

    for (std::uint64_t s = 0; s < sequences; ++s) {
        RandomEvents random{seed + s};
        Ticket ticket;
        std::vector<Event> accepted;
        for (int i = 0; i < max_length; ++i) {
            const Event e = random.next(ticket);
            const Ticket before = ticket;
            Reduced next = reduce(ticket, e);
            if (!next) {
                ++refused_total;
                // A refusal is explained, and the caller's ticket is what it was.
                REQUIRE_FALSE(next.error().message.empty());
                REQUIRE(ticket == before);
                continue;
            }
            ++accepted_by_type[e.payload.index()];
            ticket = std::move(next).value();
            accepted.push_back(e);
        }
        if (accepted.empty()) continue;
        accepted_total += accepted.size();

        std::vector<Event> decoded;
        for (const Event& e : accepted) {
            const std::string line = encode_event(e);
            auto back = decode_event(line);
            if (!back)
                FAIL("seed " << seed + s << ": " << line
                             << " does not decode: " << back.error().message);
            decoded.push_back(std::move(back).value());
        }
        const Folded refold = fold(decoded);
        if (refold.failure)
            FAIL("seed " << seed + s << ": refold refused: " << refold.failure->second.message);
        if (!(refold.ticket == ticket))
            FAIL("seed " << seed + s << ": refold differs:\n"
                         << encode_ticket(ticket) << "\n"
                         << encode_ticket(refold.ticket));
        auto snapshot = decode_ticket(encode_ticket(ticket));
        if (!snapshot)
            FAIL("seed " << seed + s << ": snapshot does not decode: " << snapshot.error().message);
        if (!(snapshot.value() == ticket))
            FAIL("seed " << seed + s << ": snapshot differs: " << encode_ticket(ticket));
    }
    INFO("accepted " << accepted_total << ", refused " << refused_total);
    // The generator must reach deep states, or the property says little.
    CHECK(accepted_total > 100'000);
    for (std::size_t type = 0; type < accepted_by_type.size(); ++type) {
        CAPTURE(type);
        CHECK(accepted_by_type[type] > 50);
    }
}

TEST_CASE("random tickets: a board-wide entry, and its index line, decide as the whole ticket",
          "[property]") {
    // What list, ready, next and the page say of a ticket comes from its catalog entry (from
    // tickets/.index when the log is unchanged): every decision must be the whole ticket's.
    constexpr std::uint64_t sequences = 2'000;
    constexpr int max_length = 60;
    const std::uint64_t seed = base_seed();
    Policy manual;  // research waits for a person, planning starts by itself
    manual.auto_research = false;
    manual.auto_planning = true;  // the other way round from the defaults
    const std::array<Policy, 2> policies{Policy{}, manual};
    BoardFacts blocked;
    blocked.blockers_done = false;
    const std::array<BoardFacts, 2> facts{BoardFacts{}, blocked};
    const Catalog no_other_tickets;
    std::size_t checked = 0;

    for (std::uint64_t s = 0; s < sequences; ++s) {
        RandomEvents random{seed + s};
        Ticket ticket;
        for (int i = 0; i < max_length; ++i) {
            Reduced next = reduce(ticket, random.next(ticket));
            if (!next) continue;
            ticket = std::move(next).value();
            if (ticket.id.empty()) continue;
            const CatalogEntry entry = summarize(ticket);
            for (const Policy& policy : policies) {
                for (const BoardFacts& f : facts) {
                    if (!(next_action(entry.ticket, policy, f) == next_action(ticket, policy, f)))
                        FAIL("seed " << seed + s << ": next_action differs for "
                                     << encode_ticket(ticket));
                }
                const app::Standings standings{no_other_tickets, policy, ticket.updated_at + 1};
                const auto whole = app::standing_json(standings.of(ticket));
                const auto summary = app::standing_json(standings.of(entry.ticket));
                if (whole != summary)
                    FAIL("seed " << seed + s << ": standing " << summary
                                 << " where the ticket's is " << whole << " for "
                                 << encode_ticket(ticket));
            }
            catalog_index::IndexLine line{{1, 2, 3}, entry};
            std::string text;
            catalog_index::append_line(text, line);
            text.pop_back();  // the newline
            const auto back = catalog_index::parse_line(text);
            if (!back || !(back->entry == entry))
                FAIL("seed " << seed + s << ": the index line does not read back: " << text);
            ++checked;
        }
    }
    CHECK(checked > 20'000);
}
