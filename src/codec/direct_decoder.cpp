// The fast path of event decoding (see direct_decoder.hpp): Boost.JSON's basic_parser calls a
// handler that writes each value straight into its field of the Event. Where each key goes is
// looked up in tables built once from the same describe() functions (schema.hpp) that drive
// encoding and the document path, so a field added there is decoded here too.

#include "direct_decoder.hpp"

#include "json_io.hpp"
#include "schema.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/error.hpp>
#include <boost/json/parse_options.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace board::codec_detail {
namespace {

struct StructTable;

/// What a JSON value does to a field of one C++ type, by the kind of the value. A missing
/// entry means that kind of value is wrong for the field, and the fast path gives up.
struct ValueOps {
    /// Where the value lands: the field itself, or a fresh value in the field's std::optional
    /// (engaged only when the key is present, as the document path does).
    void* (*resolve)(void* field) = nullptr;
    bool (*string)(void* target, std::string_view text) = nullptr;
    bool (*integer)(void* target, std::int64_t number) = nullptr;
    bool (*number)(void* target, double number) = nullptr;
    bool (*boolean)(void* target, bool flag) = nullptr;
    const StructTable* object = nullptr;  ///< a struct with a describe(): its fields
    const ValueOps* element = nullptr;    ///< a std::vector: what its elements take
    void (*clear)(void* vector) = nullptr;
    void* (*append)(void* vector) = nullptr;  ///< a new default element, to fill
};

/// Key equality without a call to memcmp: keys are a few bytes long and compared once or
/// twice per key, so the call would cost more than the comparison.
inline bool same_key(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i]) return false;
    return true;
}

struct FieldSpec {
    std::string_view name;
    std::size_t offset = 0;  ///< of the field within its struct
    const ValueOps* ops = nullptr;
};

/// The wire fields of one struct, in describe() order. The masks have one bit per field,
/// which is why a struct may have at most 64 of them.
struct StructTable {
    std::vector<FieldSpec> fields;
    std::uint64_t required_mask = 0;

    /// The index of the field named `key`, or -1. `hint` is where to look first: the codec
    /// writes fields in describe() order, so the field after the last one found is usually it.
    int find(std::string_view key, std::size_t& hint) const {
        const std::size_t n = fields.size();
        if (hint < n && same_key(fields[hint].name, key)) return static_cast<int>(hint++);
        for (std::size_t i = 0; i < n; ++i) {
            if (same_key(fields[i].name, key)) {
                hint = i + 1;
                return static_cast<int>(i);
            }
        }
        return -1;
    }
};

template <class T>
struct is_optional : std::false_type {};

template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
struct is_vector : std::false_type {};

template <class T>
struct is_vector<std::vector<T>> : std::true_type {};

void* the_field(void* field) {
    return field;
}

template <class T>
const ValueOps& ops_of();

template <class T>
const StructTable& table_of();

/// The same checks, in effect, as Reader::get() for T: what that accepts, this accepts.
template <class T>
ValueOps make_ops() {
    ValueOps ops;
    ops.resolve = &the_field;
    if constexpr (std::is_same_v<T, std::string>) {
        ops.string = [](void* target, std::string_view text) {
            static_cast<std::string*>(target)->assign(text);
            return true;
        };
    } else if constexpr (std::is_same_v<T, bool>) {
        ops.boolean = [](void* target, bool flag) {
            *static_cast<bool*>(target) = flag;
            return true;
        };
    } else if constexpr (std::is_same_v<T, int>) {
        ops.integer = [](void* target, std::int64_t number) {
            if (number < std::numeric_limits<int>::min() ||
                number > std::numeric_limits<int>::max())
                return false;
            *static_cast<int*>(target) = static_cast<int>(number);
            return true;
        };
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
        ops.integer = [](void* target, std::int64_t number) {
            *static_cast<std::int64_t*>(target) = number;
            return true;
        };
    } else if constexpr (std::is_same_v<T, double>) {
        ops.number = [](void* target, double number) {
            if (!std::isfinite(number)) return false;
            *static_cast<double*>(target) = number;
            return true;
        };
    } else if constexpr (std::is_same_v<T, Actor>) {
        ops.string = [](void* target, std::string_view text) {
            auto actor = parse_actor(text);
            if (!actor) return false;
            *static_cast<Actor*>(target) = std::move(*actor);
            return true;
        };
    } else if constexpr (std::is_enum_v<T>) {
        ops.string = [](void* target, std::string_view text) {
            const std::optional<T> parsed = parse<T>(text);
            if (!parsed) return false;
            *static_cast<T*>(target) = *parsed;
            return true;
        };
    } else if constexpr (is_optional<T>::value) {
        static_assert(!is_optional<typename T::value_type>::value,
                      "an optional optional is io.clearable(), not io.optional()");
        ops = make_ops<typename T::value_type>();
        ops.resolve = [](void* field) -> void* { return &static_cast<T*>(field)->emplace(); };
    } else if constexpr (is_vector<T>::value) {
        ops.element = &ops_of<typename T::value_type>();
        ops.clear = [](void* vector) { static_cast<T*>(vector)->clear(); };
        ops.append = [](void* vector) -> void* { return &static_cast<T*>(vector)->emplace_back(); };
    } else {
        ops.object = &table_of<T>();
    }
    return ops;
}

template <class T>
const ValueOps& ops_of() {
    static const ValueOps ops = make_ops<T>();
    return ops;
}

/// A timestamp string, into a UnixMillis (Time<UnixMillis> in describe()).
const ValueOps& time_ops() {
    static const ValueOps ops = [] {
        ValueOps built;
        built.resolve = &the_field;
        built.string = [](void* target, std::string_view text) {
            const auto ms = parse_timestamp(text);
            if (!ms) return false;
            *static_cast<UnixMillis*>(target) = *ms;
            return true;
        };
        return built;
    }();
    return ops;
}

const ValueOps& optional_time_ops() {
    static const ValueOps ops = [] {
        ValueOps built = time_ops();
        built.resolve = [](void* field) -> void* {
            return &static_cast<std::optional<UnixMillis>*>(field)->emplace();
        };
        return built;
    }();
    return ops;
}

/// Updated's requires/awaiting: `"none"` clears, a spelling sets (Reader::clearable).
const ValueOps& clearable_ops() {
    static const ValueOps ops = [] {
        ValueOps built;
        built.resolve = &the_field;
        built.string = [](void* target, std::string_view text) {
            auto& out = *static_cast<std::optional<std::optional<Awaiting>>*>(target);
            if (text == "none") {
                out.emplace(std::nullopt);
                return true;
            }
            const auto parsed = parse<Awaiting>(text);
            if (!parsed) return false;
            out.emplace().emplace(*parsed);
            return true;
        };
        return built;
    }();
    return ops;
}

/// The IO a describe() runs against to list a struct's fields. Events are read strictly, so
/// `required` is as required as `identity` (the lenient mode is for tickets only).
template <class S>
class TableBuilder {
public:
    TableBuilder(const S& sample, StructTable& table)
        : sample_(sample)
        , table_(table) {}

    template <class T>
    void identity(std::string_view name, T& field) {
        add(name, &field, ops_of<T>(), true);
    }

    template <class T>
    void required(std::string_view name, T& field) {
        add(name, &field, ops_of<T>(), true);
    }

    template <class T>
    void optional(std::string_view name, T& field) {
        add(name, &field, ops_of<T>(), false);
    }

    template <class T>
    void unless_default(std::string_view name, T& field) {
        add(name, &field, ops_of<T>(), false);
    }

    void identity(std::string_view name, Time<UnixMillis> time) {
        add(name, &time.ms, time_ops(), true);
    }

    void required(std::string_view name, Time<UnixMillis> time) {
        add(name, &time.ms, time_ops(), true);
    }

    void optional(std::string_view name, Time<UnixMillis> time) {
        add(name, &time.ms, time_ops(), false);
    }

    void unless_default(std::string_view name, Time<UnixMillis> time) {
        add(name, &time.ms, time_ops(), false);
    }

    void optional(std::string_view name, Time<std::optional<UnixMillis>> time) {
        add(name, &time.ms, optional_time_ops(), false);
    }

    void clearable(std::string_view name, std::optional<std::optional<Awaiting>>& field) {
        add(name, &field, clearable_ops(), false);
    }

private:
    void add(std::string_view name, const void* field, const ValueOps& ops, bool required) {
        constexpr std::size_t max_fields = 64;
        if (table_.fields.size() == max_fields)
            throw std::length_error{"direct decoder: more than 64 fields in one struct"};
        const auto* base = reinterpret_cast<const char*>(&sample_);
        const auto offset = static_cast<std::size_t>(static_cast<const char*>(field) - base);
        if (required) table_.required_mask |= std::uint64_t{1} << table_.fields.size();
        table_.fields.push_back(FieldSpec{name, offset, &ops});
    }

    const S& sample_;
    StructTable& table_;
};

template <class T>
const StructTable& table_of() {
    static const StructTable table = [] {
        StructTable built;
        T sample{};
        TableBuilder<T> builder{sample, built};
        describe(builder, sample);
        return built;
    }();
    return table;
}

/// The envelope, as read_event() reads it (`type` is handled apart: it picks the payload).
const StructTable& envelope_table() {
    static const StructTable table = [] {
        StructTable built;
        Event sample;
        TableBuilder<Event> builder{sample, built};
        builder.identity("v", sample.v);
        builder.identity("seq", sample.seq);
        builder.identity("id", sample.id);
        builder.identity("at", Time{sample.at});
        builder.identity("by", sample.by);
        return built;
    }();
    return table;
}

constexpr std::string_view type_key = "type";

struct PayloadSpec {
    std::string_view name;
    void* (*emplace)(Payload&);
    const StructTable* table;
};

template <std::size_t I>
void* emplace_payload(Payload& payload) {
    return &payload.emplace<I>();
}

template <std::size_t... I>
std::array<PayloadSpec, sizeof...(I)> make_payload_specs(std::index_sequence<I...> /*all*/) {
    return {PayloadSpec{std::variant_alternative_t<I, Payload>::type,
                        &emplace_payload<I>,
                        &table_of<std::variant_alternative_t<I, Payload>>()}...};
}

using PayloadSpecs = std::array<PayloadSpec, std::variant_size_v<Payload>>;

const PayloadSpecs& payload_specs() {
    static const PayloadSpecs specs = [] {
        auto built = make_payload_specs(std::make_index_sequence<std::variant_size_v<Payload>>{});
        // The root object holds the envelope and the payload side by side: a payload field
        // named like an envelope field would be read twice by the document path.
        for (const auto& spec : built) {
            for (const auto& field : spec.table->fields) {
                std::size_t hint = 0;
                if (field.name == type_key || envelope_table().find(field.name, hint) >= 0)
                    throw std::logic_error{"direct decoder: a payload field shadows the envelope"};
            }
        }
        return built;
    }();
    return specs;
}

/// The basic_parser handler. It keeps a stack of the objects and arrays it is inside and, after
/// each key, which field the coming value fills. Any callback returning false stops the parse:
/// the line then goes to the document path.
class DirectHandler {
public:
    static constexpr std::size_t max_object_size = json::object::max_size();
    static constexpr std::size_t max_array_size = json::array::max_size();
    static constexpr std::size_t max_key_size = json::string::max_size();
    static constexpr std::size_t max_string_size = json::string::max_size();

    DirectHandler()
        : envelope_(envelope_table())
        , payloads_(payload_specs()) {
        frames_.reserve(8);
    }

    void start(Event& out) {
        event_ = &out;
        frames_.clear();
        skip_depth_ = 0;
        pending_ = nullptr;
        pending_field_ = nullptr;
        expecting_type_ = false;
        type_seen_ = false;
        payload_table_ = nullptr;
        payload_ = nullptr;
        payload_seen_ = 0;
        payload_hint_ = 0;
        complete_ = false;
        text_.clear();
        key_.clear();
        number_.clear();
    }

    /// The root object ended with everything the document path requires.
    bool complete() const { return complete_; }

    bool on_document_begin(json::error_code&) { return true; }

    bool on_document_end(json::error_code&) { return true; }

    bool on_object_begin(json::error_code& ec) {
        if (skip_depth_ > 0) {
            ++skip_depth_;
            return true;
        }
        if (frames_.empty()) {
            frames_.push_back(Frame{&envelope_, event_, nullptr, 0, 0});
            return true;
        }
        void* target = nullptr;
        const ValueOps* ops = nullptr;
        switch (slot(target, ops)) {
            case Slot::ignored:
                skip_depth_ = 1;
                return true;
            case Slot::field:
                if (ops->object == nullptr) return give_up(ec);
                frames_.push_back(Frame{ops->object, target, nullptr, 0, 0});
                return true;
            case Slot::type:
            case Slot::refused:
                break;
        }
        return give_up(ec);
    }

    bool on_object_end(std::size_t, json::error_code& ec) {
        if (skip_depth_ > 0) {
            --skip_depth_;
            return true;
        }
        const Frame& top = frames_.back();
        if ((top.seen & top.table->required_mask) != top.table->required_mask) return give_up(ec);
        if (frames_.size() == 1) {
            if (payload_table_ == nullptr ||
                (payload_seen_ & payload_table_->required_mask) != payload_table_->required_mask)
                return give_up(ec);
            if (event_->v < 1 || event_->v > event_schema_version) return give_up(ec);
            complete_ = true;
        }
        frames_.pop_back();
        return true;
    }

    bool on_array_begin(json::error_code& ec) {
        if (skip_depth_ > 0) {
            ++skip_depth_;
            return true;
        }
        if (frames_.empty()) return give_up(ec);
        void* target = nullptr;
        const ValueOps* ops = nullptr;
        switch (slot(target, ops)) {
            case Slot::ignored:
                skip_depth_ = 1;
                return true;
            case Slot::field:
                if (ops->element == nullptr) return give_up(ec);
                ops->clear(target);
                frames_.push_back(Frame{nullptr, target, ops, 0, 0});
                return true;
            case Slot::type:
            case Slot::refused:
                break;
        }
        return give_up(ec);
    }

    bool on_array_end(std::size_t, json::error_code&) {
        if (skip_depth_ > 0) {
            --skip_depth_;
            return true;
        }
        frames_.pop_back();
        return true;
    }

    bool on_key_part(json::string_view part, std::size_t, json::error_code&) {
        if (skip_depth_ == 0) key_.append(part.data(), part.size());
        return true;
    }

    bool on_key(json::string_view tail, std::size_t, json::error_code& ec) {
        if (skip_depth_ > 0) return true;
        std::string_view key{tail.data(), tail.size()};
        if (!key_.empty()) key = key_.append(tail.data(), tail.size());
        const bool bound = bind(key);
        key_.clear();
        return bound || give_up(ec);
    }

    bool on_string_part(json::string_view part, std::size_t, json::error_code&) {
        if (skip_depth_ == 0) text_.append(part.data(), part.size());
        return true;
    }

    bool on_string(json::string_view tail, std::size_t, json::error_code& ec) {
        if (skip_depth_ > 0) return true;
        std::string_view text{tail.data(), tail.size()};
        if (!text_.empty()) text = text_.append(tail.data(), tail.size());
        const bool taken = take_string(text);
        text_.clear();
        return taken || give_up(ec);
    }

    bool on_number_part(json::string_view part, json::error_code&) {
        number_.append(part.data(), part.size());
        return true;
    }

    bool on_int64(std::int64_t number, json::string_view, json::error_code& ec) {
        number_.clear();
        if (skip_depth_ > 0) return true;
        void* target = nullptr;
        const ValueOps* ops = nullptr;
        switch (slot(target, ops)) {
            case Slot::ignored:
                return true;
            case Slot::field:
                if (ops->integer != nullptr && ops->integer(target, number)) return true;
                if (ops->number != nullptr && ops->number(target, static_cast<double>(number)))
                    return true;
                break;
            case Slot::type:
            case Slot::refused:
                break;
        }
        return give_up(ec);
    }

    bool on_uint64(std::uint64_t number, json::string_view, json::error_code& ec) {
        number_.clear();
        if (skip_depth_ > 0) return true;
        // Boost only uses uint64 above INT64_MAX: too big for every integer field.
        return take_number(static_cast<double>(number)) || give_up(ec);
    }

    bool on_double(double parsed, json::string_view tail, json::error_code& ec) {
        std::string_view text{tail.data(), tail.size()};
        if (!number_.empty()) text = number_.append(tail.data(), tail.size());
        const double exact = exact_double(parsed, text);
        number_.clear();
        if (skip_depth_ > 0) return true;
        return take_number(exact) || give_up(ec);
    }

    bool on_bool(bool flag, json::error_code& ec) {
        if (skip_depth_ > 0) return true;
        void* target = nullptr;
        const ValueOps* ops = nullptr;
        switch (slot(target, ops)) {
            case Slot::ignored:
                return true;
            case Slot::field:
                if (ops->boolean != nullptr && ops->boolean(target, flag)) return true;
                break;
            case Slot::type:
            case Slot::refused:
                break;
        }
        return give_up(ec);
    }

    bool on_null(json::error_code& ec) {
        if (skip_depth_ > 0) return true;
        void* target = nullptr;
        const ValueOps* ops = nullptr;
        // `null` is never a field's value; under an unknown key it is ignored like any value.
        if (slot(target, ops) == Slot::ignored) return true;
        return give_up(ec);
    }

    bool on_comment_part(json::string_view, json::error_code&) { return true; }

    bool on_comment(json::string_view, json::error_code&) { return true; }

private:
    struct Frame {
        const StructTable* table;  ///< null: an array
        void* target;              ///< the struct, or the vector
        const ValueOps* array;     ///< an array's ops (element, append)
        std::uint64_t seen;        ///< the table's fields met so far
        std::size_t hint;          ///< where StructTable::find looks first
    };

    enum class Slot : std::uint8_t {
        field,    ///< `target` with `ops`
        ignored,  ///< the value of an unknown key
        type,     ///< the value of the envelope's `type`
        refused,  ///< a value where none can be: the document itself is not an object
    };

    static bool give_up(json::error_code& ec) {
        ec = json::error::exception;
        return false;
    }

    /// Where the coming value goes.
    Slot slot(void*& target, const ValueOps*& ops) {
        if (frames_.empty()) return Slot::refused;
        Frame& top = frames_.back();
        if (top.table == nullptr) {
            ops = top.array->element;
            target = ops->resolve(top.array->append(top.target));
            return Slot::field;
        }
        if (expecting_type_) {
            expecting_type_ = false;
            return Slot::type;
        }
        if (pending_ == nullptr) return Slot::ignored;
        ops = pending_;
        target = ops->resolve(pending_field_);
        pending_ = nullptr;
        return Slot::field;
    }

    enum class Bound : std::uint8_t { found, unknown, duplicate };

    Bound bind_in(const StructTable& table,
                  void* object,
                  std::uint64_t& seen,
                  std::size_t& hint,
                  std::string_view key) {
        const int index = table.find(key, hint);
        if (index < 0) return Bound::unknown;
        const std::uint64_t bit = std::uint64_t{1} << index;
        if ((seen & bit) != 0) return Bound::duplicate;  // which one wins is the document's call
        seen |= bit;
        const FieldSpec& field = table.fields[static_cast<std::size_t>(index)];
        pending_ = field.ops;
        pending_field_ = static_cast<char*>(object) + field.offset;
        return Bound::found;
    }

    /// Points `pending_` at the field named `key` (null: an unknown key, its value ignored).
    /// False to give up.
    bool bind(std::string_view key) {
        pending_ = nullptr;
        Frame& top = frames_.back();
        if (frames_.size() > 1)
            return bind_in(*top.table, top.target, top.seen, top.hint, key) != Bound::duplicate;
        // The root: payload fields (once `type` has named the payload) and the envelope.
        if (payload_table_ != nullptr) {
            const Bound bound =
                bind_in(*payload_table_, payload_, payload_seen_, payload_hint_, key);
            if (bound != Bound::unknown) return bound == Bound::found;
        }
        if (same_key(key, type_key)) {
            if (type_seen_) return false;
            type_seen_ = true;
            expecting_type_ = true;
            return true;
        }
        const Bound bound = bind_in(*top.table, top.target, top.seen, top.hint, key);
        if (bound != Bound::unknown) return bound == Bound::found;
        // Unknown to the envelope: before `type` it may be a payload field not yet known as
        // one, so leave such a line to the document path (the codec writes `type` first).
        return payload_table_ != nullptr;
    }

    bool take_string(std::string_view text) {
        void* target = nullptr;
        const ValueOps* ops = nullptr;
        switch (slot(target, ops)) {
            case Slot::ignored:
                return true;
            case Slot::field:
                return ops->string != nullptr && ops->string(target, text);
            case Slot::type:
                for (const PayloadSpec& spec : payloads_) {
                    if (same_key(spec.name, text)) {
                        payload_ = spec.emplace(event_->payload);
                        payload_table_ = spec.table;
                        return true;
                    }
                }
                return false;
            case Slot::refused:
                break;
        }
        return false;
    }

    bool take_number(double number) {
        void* target = nullptr;
        const ValueOps* ops = nullptr;
        switch (slot(target, ops)) {
            case Slot::ignored:
                return true;
            case Slot::field:
                return ops->number != nullptr && ops->number(target, number);
            case Slot::type:
            case Slot::refused:
                break;
        }
        return false;
    }

    const StructTable& envelope_;
    const PayloadSpecs& payloads_;
    Event* event_ = nullptr;
    std::vector<Frame> frames_;
    std::size_t skip_depth_ = 0;  ///< > 0: inside the value of an unknown key
    const ValueOps* pending_ = nullptr;
    void* pending_field_ = nullptr;
    bool expecting_type_ = false;
    bool type_seen_ = false;
    const StructTable* payload_table_ = nullptr;
    void* payload_ = nullptr;
    std::uint64_t payload_seen_ = 0;
    std::size_t payload_hint_ = 0;
    bool complete_ = false;
    std::string text_;    ///< a string's pieces, when the parser hands it over in several
    std::string key_;     ///< a key's pieces
    std::string number_;  ///< a number's pieces
};

}  // namespace

struct DirectEventDecoder::Impl {
    json::basic_parser<DirectHandler> parser{json::parse_options{}};
};

DirectEventDecoder::DirectEventDecoder()
    : impl_(std::make_unique<Impl>()) {}

DirectEventDecoder::~DirectEventDecoder() = default;

bool DirectEventDecoder::decode(std::string_view line, Event& out) {
    auto& parser = impl_->parser;
    parser.reset();
    parser.handler().start(out);
    json::error_code ec;
    const std::size_t consumed = parser.write_some(false, line.data(), line.size(), ec);
    return !ec && consumed == line.size() && parser.handler().complete();
}

}  // namespace board::codec_detail
