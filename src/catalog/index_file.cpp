#include "catalog/index_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <vector>

namespace board::catalog_index {
namespace {

void append_escaped(std::string& out, std::string_view text) {
    for (const char c : text) {
        switch (c) {
            case '\\':
                out += "\\\\";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case ',':
                out += "\\,";
                break;
            default:
                out += c;
        }
    }
}

/// Splits `text` at unescaped `separator`s and unescapes each piece. nullopt on a dangling
/// or unknown escape.
std::optional<std::vector<std::string>> split_unescaped(std::string_view text, char separator) {
    std::vector<std::string> pieces;
    if (text.empty()) return pieces;
    std::string piece;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == separator) {
            pieces.push_back(std::move(piece));
            piece.clear();
            continue;
        }
        if (c != '\\') {
            piece += c;
            continue;
        }
        if (++i == text.size()) return std::nullopt;
        switch (text[i]) {
            case '\\':
                piece += '\\';
                break;
            case 't':
                piece += '\t';
                break;
            case 'n':
                piece += '\n';
                break;
            case 'r':
                piece += '\r';
                break;
            case ',':
                piece += ',';
                break;
            default:
                return std::nullopt;
        }
    }
    pieces.push_back(std::move(piece));
    return pieces;
}

/// `text` unescaped into `out` (assigned in place: no temporary string). False on a bad escape.
bool unescape_into(std::string_view text, std::string& out) {
    if (text.find('\\') == std::string_view::npos) {
        out.assign(text);
        return true;
    }
    auto pieces = split_unescaped(text, '\0');
    if (!pieces || pieces->size() != 1) return false;
    out = std::move(pieces->front());
    return true;
}

/// A `,`-joined list into `out`. Most lists hold no escape: they are cut where they stand,
/// without the per-character copy split_unescaped makes.
bool list_into(std::string_view text, std::vector<std::string>& out) {
    if (text.find('\\') != std::string_view::npos) {
        auto pieces = split_unescaped(text, ',');
        if (!pieces) return false;
        out = std::move(*pieces);
        return true;
    }
    out.clear();
    if (text.empty()) return true;
    out.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), ',')) + 1);
    while (true) {
        const auto comma = text.find(',');
        out.emplace_back(text.substr(0, comma));
        if (comma == std::string_view::npos) return true;
        text.remove_prefix(comma + 1);
    }
}

template <class Number>
bool read_number(std::string_view text, Number& out) {
    const auto* end = text.data() + text.size();
    const auto result = std::from_chars(text.data(), end, out);
    return result.ec == std::errc{} && result.ptr == end;
}

template <class Enum>
bool read_enum(std::string_view text, Enum& out) {
    const auto value = parse<Enum>(text);
    if (value) out = *value;
    return value.has_value();
}

template <class Enum>
bool read_optional_enum(std::string_view text, std::optional<Enum>& out) {
    if (text.empty()) {
        out.reset();
        return true;
    }
    Enum value{};
    if (!read_enum(text, value)) return false;
    out = value;
    return true;
}

void append_list(std::string& out, const std::vector<std::string>& items) {
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += ',';
        append_escaped(out, items[i]);
    }
}

template <class Enum>
std::string_view optional_name(const std::optional<Enum>& value) {
    return value ? to_string(*value) : std::string_view{};
}

constexpr std::size_t field_count = 37;

}  // namespace

void append_line(std::string& out, const IndexLine& line) {
    const TicketSummary& t = line.entry.ticket;
    out += t.id;  // a valid id never needs escaping
    fmt::format_to(std::back_inserter(out),
                   "\t{}\t{}\t{}\t{}\t",
                   line.log.inode,
                   line.log.size,
                   line.log.ctime_ns,
                   t.seq);
    append_escaped(out, t.title);
    fmt::format_to(std::back_inserter(out), "\t{}\t{}\t", to_string(t.type), t.priority);
    append_list(out, t.labels);
    out += '\t';
    append_escaped(out, t.parent);
    out += '\t';
    append_list(out, t.blocked_by);
    fmt::format_to(std::back_inserter(out),
                   "\t{}\t{}\t{}\t{}\t{}\t",
                   to_string(t.status),
                   optional_name(t.resolution),
                   optional_name(t.awaiting),
                   to_string(t.handoff),
                   optional_name(t.requires_));
    if (t.run) {
        append_escaped(out, t.run->id);
        fmt::format_to(
            std::back_inserter(out), "\t{}\t{}", to_string(t.run->phase), t.run->started_at);
    } else {
        out += "\t\t";
    }
    fmt::format_to(std::back_inserter(out),
                   "\t{}\t{}\t{}\t",
                   t.phase_attempts,
                   t.phase_iterations,
                   t.phase_started_at);
    if (t.last_failure_at) fmt::format_to(std::back_inserter(out), "{}", *t.last_failure_at);
    fmt::format_to(std::back_inserter(out),
                   "\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t",
                   t.cost_usd,
                   t.runs_total,
                   t.created_at,
                   t.updated_at,
                   line.entry.questions_pending,
                   line.entry.questions_total,
                   line.entry.notes,
                   t.awaiting_since,
                   t.reminders,
                   t.reminded_at,
                   t.escalated_at);
    append_list(out, t.escalated_to);
    out += '\t';
    append_escaped(out, t.branch);
    out += t.ship_owed ? "\t1\n" : "\t0\n";
}

std::optional<IndexLine> parse_line(std::string_view text) {
    IndexLine line;
    if (!parse_line_into(text, line.log, line.entry)) return std::nullopt;
    return line;
}

bool parse_line_into(std::string_view text, LogIdentity& log, CatalogEntry& entry) {
    std::array<std::string_view, field_count> f;
    std::size_t n = 0;
    std::size_t start = 0;
    while (true) {
        const std::size_t tab = text.find('\t', start);
        if (n == field_count) return false;
        f[n++] = text.substr(start, tab == std::string_view::npos ? tab : tab - start);
        if (tab == std::string_view::npos) break;
        start = tab + 1;
    }
    if (n != field_count) return false;

    TicketSummary& t = entry.ticket;
    if (!is_valid_ticket_id(f[0])) return false;
    t.id.assign(f[0]);
    bool ok = read_number(f[1], log.inode) && read_number(f[2], log.size) &&
              read_number(f[3], log.ctime_ns) && read_number(f[4], t.seq) &&
              read_enum(f[6], t.type) && read_number(f[7], t.priority) &&
              read_enum(f[11], t.status) && read_optional_enum(f[12], t.resolution) &&
              read_optional_enum(f[13], t.awaiting) && read_enum(f[14], t.handoff) &&
              read_optional_enum(f[15], t.requires_) && read_number(f[19], t.phase_attempts) &&
              read_number(f[20], t.phase_iterations) && read_number(f[21], t.phase_started_at) &&
              read_number(f[23], t.cost_usd) && read_number(f[24], t.runs_total) &&
              read_number(f[25], t.created_at) && read_number(f[26], t.updated_at) &&
              read_number(f[27], entry.questions_pending) &&
              read_number(f[28], entry.questions_total) && read_number(f[29], entry.notes) &&
              read_number(f[30], t.awaiting_since) && read_number(f[31], t.reminders) &&
              read_number(f[32], t.reminded_at) && read_number(f[33], t.escalated_at);
    if (!ok) return false;
    if (!unescape_into(f[5], t.title) || !list_into(f[8], t.labels) ||
        !unescape_into(f[9], t.parent) || !list_into(f[10], t.blocked_by) ||
        !list_into(f[34], t.escalated_to) || !unescape_into(f[35], t.branch))
        return false;
    if (f[36] != "0" && f[36] != "1") return false;
    t.ship_owed = f[36] == "1";
    if (!f[16].empty()) {
        Run& run = t.run.emplace();
        if (!unescape_into(f[16], run.id) || !read_enum(f[17], run.phase) ||
            !read_number(f[18], run.started_at))
            return false;
    } else {
        t.run.reset();
    }
    if (!f[22].empty()) {
        UnixMillis at = 0;
        if (!read_number(f[22], at)) return false;
        t.last_failure_at = at;
    }
    return true;
}

}  // namespace board::catalog_index
