#include "orchestrator/state_members.hpp"

#include "codec/json_writer.hpp"

#include <algorithm>
#include <cstdint>

namespace board::orchestrator {
namespace {

using codec_detail::append_json_string;

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/// `value` without the white space between its tokens (strings kept as they are), so that a
/// value written with another indentation compares equal.
std::string compact(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    bool in_string = false;
    for (std::size_t k = 0; k < value.size(); ++k) {
        const char c = value[k];
        if (in_string) {
            out += c;
            if (c == '\\' && k + 1 < value.size())
                out += value[++k];
            else if (c == '"')
                in_string = false;
        } else if (!is_space(c)) {
            out += c;
            in_string = c == '"';
        }
    }
    return out;
}

void append_utf8(std::string& out, std::uint32_t code) {
    if (code < 0x80) {
        out += static_cast<char>(code);
    } else if (code < 0x800) {
        out += static_cast<char>(0xC0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (code >> 18));
        out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    }
}

/// A member of an object: its key decoded, and where its value lies in the text.
struct Member {
    std::string key;
    std::size_t begin = 0;
    std::size_t end = 0;
};

/// An object: where its braces are, and the members asked for in text order.
struct Object {
    std::size_t open = 0;
    std::size_t close = 0;
    std::size_t count = 0;  ///< every member, asked for or not
    std::vector<Member> members;

    /// The member named `key` as JSON.parse keeps it (the last of equal keys), or null.
    const Member* last(std::string_view key) const {
        const auto found = std::find_if(
            members.rbegin(), members.rend(), [&](const Member& m) { return m.key == key; });
        return found == members.rend() ? nullptr : &*found;
    }
};

/// Reads the structure of JSON text without building a document: objects member by member
/// where asked, anything else skipped by counting brackets (iteratively: an agent may nest a
/// value as deep as it likes). Lenient about what it skips; the tool refuses a file that is
/// not JSON, and for one that is, this reads the same members as JSON.parse.
class Scanner {
public:
    explicit Scanner(std::string_view text)
        : text_(text) {}

    /// More members kept than any real state has (projects, and the guarded members): the
    /// text is taken as unreadable rather than read at a cost an agent could choose.
    static constexpr std::size_t max_members = 500'000;

    /// The object whose `{` is the first token at or after `at`, or nullopt; of its members,
    /// those whose decoded key `keep` takes (the others are skipped, not kept).
    template <class Keep>
    std::optional<Object> object(std::size_t at, Keep&& keep) {
        i_ = at;
        skip_space();
        if (!next_is('{')) return std::nullopt;
        Object found;
        found.open = i_++;
        skip_space();
        if (next_is('}')) {
            found.close = i_++;
            return found;
        }
        while (true) {
            skip_space();
            key_.clear();
            if (!next_is('"') || !skip_string(&key_)) return std::nullopt;
            skip_space();
            if (!next_is(':')) return std::nullopt;
            ++i_;
            skip_space();
            const std::size_t begin = i_;
            if (!skip_value()) return std::nullopt;
            ++found.count;
            if (keep(std::string_view{key_})) {
                if (++members_read_ > max_members) return std::nullopt;
                found.members.push_back(Member{key_, begin, i_});
            }
            skip_space();
            if (next_is(',')) {
                ++i_;
                continue;
            }
            if (!next_is('}')) return std::nullopt;
            found.close = i_++;
            return found;
        }
    }

    /// Read past max_members: no reading of the text is to be believed.
    bool exhausted() const { return members_read_ > max_members; }

    /// Nothing but white space from where the last object ended.
    bool only_space_left() {
        skip_space();
        return i_ == text_.size();
    }

private:
    bool next_is(char c) const { return i_ < text_.size() && text_[i_] == c; }

    void skip_space() {
        while (i_ < text_.size() && is_space(text_[i_])) ++i_;
    }

    /// Past the string at i_ (its opening quote), decoding it into `decoded` when given; a
    /// lone surrogate decodes as U+FFFD.
    bool skip_string(std::string* decoded) {
        ++i_;
        while (i_ < text_.size()) {
            const char c = text_[i_++];
            if (c == '"') return true;
            if (c != '\\') {
                if (decoded) *decoded += c;
                continue;
            }
            if (i_ >= text_.size()) return false;
            const char escape = text_[i_++];
            if (!decoded) continue;
            switch (escape) {
                case 'b':
                    *decoded += '\b';
                    break;
                case 'f':
                    *decoded += '\f';
                    break;
                case 'n':
                    *decoded += '\n';
                    break;
                case 'r':
                    *decoded += '\r';
                    break;
                case 't':
                    *decoded += '\t';
                    break;
                case 'u': {
                    auto code = hex4();
                    if (!code) return false;
                    if (*code >= 0xD800 && *code < 0xDC00 && text_.substr(i_, 2) == "\\u") {
                        const std::size_t back = i_;
                        i_ += 2;
                        const auto low = hex4();
                        if (low && *low >= 0xDC00 && *low < 0xE000)
                            code = 0x10000 + ((*code - 0xD800) << 10) + (*low - 0xDC00);
                        else
                            i_ = back;
                    }
                    append_utf8(*decoded, *code >= 0xD800 && *code < 0xE000 ? 0xFFFD : *code);
                    break;
                }
                default:
                    *decoded += escape;  // `"`, `\`, `/`
            }
        }
        return false;
    }

    std::optional<std::uint32_t> hex4() {
        if (i_ + 4 > text_.size()) return std::nullopt;
        std::uint32_t code = 0;
        for (int k = 0; k < 4; ++k) {
            const char h = text_[i_++];
            code <<= 4;
            if (h >= '0' && h <= '9')
                code |= static_cast<std::uint32_t>(h - '0');
            else if (h >= 'a' && h <= 'f')
                code |= static_cast<std::uint32_t>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F')
                code |= static_cast<std::uint32_t>(h - 'A' + 10);
            else
                return std::nullopt;
        }
        return code;
    }

    bool skip_value() {
        if (i_ >= text_.size()) return false;
        const char c = text_[i_];
        if (c == '"') return skip_string(nullptr);
        if (c == '{' || c == '[') {
            std::size_t depth = 0;
            while (i_ < text_.size()) {
                const char d = text_[i_];
                if (d == '"') {
                    if (!skip_string(nullptr)) return false;
                    continue;
                }
                ++i_;
                if (d == '{' || d == '[') ++depth;
                if ((d == '}' || d == ']') && --depth == 0) return true;
            }
            return false;
        }
        const std::size_t start = i_;
        while (i_ < text_.size() && !is_space(text_[i_]) &&
               std::string_view{",:{}[]\""}.find(text_[i_]) == std::string_view::npos)
            ++i_;
        return i_ > start;
    }

    std::string_view text_;
    std::size_t i_ = 0;
    std::size_t members_read_ = 0;
    std::string key_;  ///< the key being read, reused
};

/// Whether `key` names one of `members`.
bool is_one_of(std::string_view key, const std::vector<GuardedMember>& members) {
    return std::any_of(
        members.begin(), members.end(), [&](const GuardedMember& m) { return m.name == key; });
}

/// Claude Code strips a byte order mark before JSON.parse: so does the scan.
constexpr std::string_view byte_order_mark = "\xEF\xBB\xBF";

/// Every object that may hold guarded members. JSON.parse keeps the last of equal keys; the
/// reading does too, while a put-back sets every one of them, so that no reading of keys that
/// differs from the tool's (a lone surrogate, decoded here as U+FFFD) can leave one behind.
struct Layout {
    Object top;
    /// The value of each `per_key_in` member that is an object, in text order (JSON.parse
    /// keeps the last).
    std::vector<Object> keyed;

    /// Each key's object in each of them, in text order: (which of `keyed`, key, object).
    struct Entry {
        std::size_t in = 0;
        std::string key;
        Object object;
    };

    std::vector<Entry> entries;
    /// A `per_key_in` member that is not an object (the tool reads no member from it).
    bool keyed_not_object = false;
};

std::optional<Layout> scan(std::string_view text, const GuardedMembers& guarded) {
    Scanner scanner{text};
    Layout layout;
    auto top = scanner.object(text.starts_with(byte_order_mark) ? byte_order_mark.size() : 0,
                              [&](std::string_view key) {
                                  return key == guarded.per_key_in || is_one_of(key, guarded.top);
                              });
    if (!top || !scanner.only_space_left()) return std::nullopt;
    layout.top = std::move(*top);
    for (const Member& member : layout.top.members) {
        if (member.key != guarded.per_key_in) continue;
        auto keyed = scanner.object(member.begin, [](std::string_view) { return true; });
        if (scanner.exhausted()) return std::nullopt;
        layout.keyed_not_object = !keyed;
        if (!keyed) continue;
        for (const Member& entry : keyed->members) {
            auto object = scanner.object(
                entry.begin, [&](std::string_view key) { return is_one_of(key, guarded.per_key); });
            if (scanner.exhausted()) return std::nullopt;
            if (object)
                layout.entries.push_back({layout.keyed.size(), entry.key, std::move(*object)});
        }
        layout.keyed.push_back(std::move(*keyed));
    }
    return layout;
}

/// The object of each key in the last `per_key_in` object, as JSON.parse keeps them: the last
/// of equal keys, so a later value that is not an object hides an earlier one. None when the
/// last `per_key_in` member is not an object.
std::map<std::string_view, const Object*> last_entries(const Layout& layout) {
    std::map<std::string_view, const Object*> last;
    if (layout.keyed_not_object || layout.keyed.empty()) return last;
    for (const auto& entry : layout.entries)
        if (entry.in + 1 == layout.keyed.size()) last[entry.key] = &entry.object;
    for (const Member& member : layout.keyed.back().members) {
        const auto found = last.find(member.key);
        if (found != last.end() && found->second->open < member.begin) last.erase(found);
    }
    return last;
}

bool is_none(std::string_view compacted, const GuardedMember& member) {
    return compacted == member.none || compacted == "null";
}

/// `"name":value`, the name encoded as a JSON string.
std::string member_text(std::string_view name, std::string_view value) {
    std::string out;
    append_json_string(out, name);
    out += ':';
    out += value;
    return out;
}

/// A change to the text: [begin, end) replaced by `text` (an insertion when they are equal).
struct Edit {
    std::size_t begin = 0;
    std::size_t end = 0;
    std::string text;
};

/// The edits that make `object`'s members in `members` (at `key`) as `wanted` says: every
/// occurrence of one whose value differs is replaced; the text of a missing one is added to
/// `added`.
void edit_object(std::string_view text,
                 const Object& object,
                 const std::optional<std::string>& key,
                 const std::vector<GuardedMember>& members,
                 const MemberValues& wanted,
                 std::vector<Edit>& edits,
                 std::vector<std::string>& added) {
    for (const GuardedMember& member : members) {
        const auto want = wanted.find({key, std::string{member.name}});
        const bool wants_some = want != wanted.end();
        bool present = false;
        for (const Member& now : object.members) {
            if (now.key != member.name) continue;
            present = true;
            const std::string current = compact(text.substr(now.begin, now.end - now.begin));
            if (wants_some ? current == want->second : is_none(current, member)) continue;
            edits.push_back(
                Edit{now.begin, now.end, wants_some ? want->second : std::string{member.none}});
        }
        if (!present && wants_some) added.push_back(member_text(member.name, want->second));
    }
}

/// One insertion of `added` members at the end of `object`, before its `}`: after any member
/// of the same key (which JSON.parse would let hide them), and at a place no other edit
/// starts.
void insert_members(const Object& object,
                    const std::vector<std::string>& added,
                    std::vector<Edit>& edits) {
    if (added.empty()) return;
    std::string inserted;
    for (const auto& member : added)
        inserted += (inserted.empty() && object.count == 0 ? "" : ",") + member;
    edits.push_back(Edit{object.close, object.close, std::move(inserted)});
}

}  // namespace

const GuardedMembers& claude_state_members() {
    static const GuardedMembers members{
        {{"mcpServers", "{}"}, {"env", "{}"}},
        "projects",
        {{"mcpServers", "{}"},
         {"enabledMcpjsonServers", "[]"},
         {"enableAllProjectMcpServers", "false"},
         {"hasTrustDialogAccepted", "false"}},
    };
    return members;
}

std::optional<MemberValues> read_members(std::string_view text, const GuardedMembers& guarded) {
    const auto layout = scan(text, guarded);
    if (!layout) return std::nullopt;
    MemberValues values;
    const auto take = [&](const Object& object,
                          const std::optional<std::string>& key,
                          const std::vector<GuardedMember>& members) {
        for (const GuardedMember& member : members) {
            const Member* found = object.last(member.name);
            if (!found) continue;
            std::string value = compact(text.substr(found->begin, found->end - found->begin));
            if (!is_none(value, member)) values[{key, std::string{member.name}}] = std::move(value);
        }
    };
    take(layout->top, std::nullopt, guarded.top);
    for (const auto& [key, object] : last_entries(*layout))
        take(*object, std::string{key}, guarded.per_key);
    return values;
}

std::string members_document(const MemberValues& values, const GuardedMembers& guarded) {
    std::string out = "{";
    const auto separate = [&] {
        if (out.size() > 1 && out.back() != '{') out += ',';
    };
    const std::optional<std::string>* open_key = nullptr;
    for (const auto& [place, value] : values) {
        const auto& [key, name] = place;
        if (key && (!open_key || **open_key != *key)) {
            if (open_key)
                out += '}';  // the previous key's object
            else {
                separate();
                append_json_string(out, guarded.per_key_in);
                out += ":{";
            }
            separate();
            append_json_string(out, *key);
            out += ":{";
            open_key = &place.first;
        }
        separate();
        out += member_text(name, value);
    }
    if (open_key) out += "}}";
    out += "}\n";
    return out;
}

std::optional<std::string> put_members(std::string_view text,
                                       const MemberValues& wanted,
                                       const GuardedMembers& guarded) {
    const auto layout = scan(text, guarded);
    if (!layout) return std::nullopt;
    std::vector<Edit> edits;
    std::vector<std::string> added_on_top;
    edit_object(text, layout->top, std::nullopt, guarded.top, wanted, edits, added_on_top);
    for (const auto& entry : layout->entries) {
        std::vector<std::string> added;
        edit_object(text, entry.object, entry.key, guarded.per_key, wanted, edits, added);
        insert_members(entry.object, added, edits);
    }

    // Keys `wanted` names that the last `per_key_in` object has no object for: an object of
    // their members each, added to it.
    const auto in_last = last_entries(*layout);
    std::vector<std::string> missing;
    for (auto at = wanted.begin(); at != wanted.end();) {
        const auto& key = at->first.first;
        if (!key || in_last.contains(*key)) {
            ++at;
            continue;
        }
        std::string members;
        for (; at != wanted.end() && at->first.first == key; ++at)
            members += (members.empty() ? "" : ",") + member_text(at->first.second, at->second);
        std::string entry;
        append_json_string(entry, *key);
        missing.push_back(entry + ":{" + members + "}");
    }
    if (!missing.empty() && !layout->keyed.empty() && !layout->keyed_not_object) {
        insert_members(layout->keyed.back(), missing, edits);
    } else if (!missing.empty() && !layout->top.last(guarded.per_key_in)) {
        std::string entries;
        for (const auto& entry : missing) entries += (entries.empty() ? "" : ",") + entry;
        added_on_top.push_back(member_text(guarded.per_key_in, "{" + entries + "}"));
    }
    // (A `per_key_in` member that is not an object is the tool's to sort out: it holds no
    // member to run anything from.)
    insert_members(layout->top, added_on_top, edits);

    // One pass from the start: no two edits start at one place (an insertion goes right
    // before a `}`, where no value starts).
    std::sort(
        edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
    std::string out;
    out.reserve(text.size());
    std::size_t at = 0;
    for (const Edit& edit : edits) {
        out.append(text.substr(at, edit.begin - at));
        out += edit.text;
        at = edit.end;
    }
    out.append(text.substr(at));
    return out;
}

}  // namespace board::orchestrator
