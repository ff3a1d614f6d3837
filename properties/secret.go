package properties

// Secret is a setting that must not show up in logs or error messages, such
// as management_token. Printed with the fmt package or encoded as JSON it
// reads "[redacted]" (or "" when empty); Reveal returns the value itself.
type Secret string

const redacted = "[redacted]"

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return string(s) }

// String returns "[redacted]", or "" for an empty secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString is String, so that %#v hides the value too.
func (s Secret) GoString() string { return s.String() }

// MarshalText encodes the secret as String does, for JSON and other
// text encodings.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
