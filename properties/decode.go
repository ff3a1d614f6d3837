package properties

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The constructors below build the field table of a struct, in the manner
// of magiconair/properties' Decode but with the units and the "unset" state
// that serving.properties needs.

func stringField(key string, p *string) field {
	return field{
		key: key,
		set: func(raw string) error { *p = raw; return nil },
		get: func() (string, bool) { return *p, *p != "" },
	}
}

// lowerField is a string field whose value is read in lower case.
func lowerField(key string, p *string) field {
	f := stringField(key, p)
	f.set = func(raw string) error { *p = strings.ToLower(raw); return nil }
	return f
}

func intField(key string, p *int) field {
	return field{
		key: key,
		set: func(raw string) (err error) { *p, err = parseInt(raw); return err },
		get: func() (string, bool) { return strconv.Itoa(*p), true },
	}
}

// optIntField is an int field that stays nil unless the key is set.
func optIntField(key string, p **int) field { return optField(key, p, parseInt, strconv.Itoa) }

// optField is a field of type T that stays nil unless the key is set.
func optField[T any](key string, p **T, parse func(string) (T, error), format func(T) string) field {
	return field{
		key: key,
		set: func(raw string) error {
			v, err := parse(raw)
			if err != nil {
				return err
			}
			*p = &v
			return nil
		},
		get: func() (string, bool) {
			if *p == nil {
				return "", false
			}
			return format(**p), true
		},
	}
}

// boolField reads true or false (any case).
func boolField(key string, p *bool) field {
	return field{
		key: key,
		set: func(raw string) (err error) { *p, err = parseBool(raw); return err },
		get: func() (string, bool) { return strconv.FormatBool(*p), true },
	}
}

// optBoolField is a bool field that stays nil unless the key is set.
func optBoolField(key string, p **bool) field { return optField(key, p, parseBool, strconv.FormatBool) }

// flagField is a boolField that is written back (and so passed to the
// worker) only when true: a switchyard key DJL's workers never saw.
func flagField(key string, p *bool) field {
	f := boolField(key, p)
	f.get = func() (string, bool) { return "true", *p }
	return f
}

// secretField is a string field whose value is never written back.
func secretField(key string, p *Secret) field {
	return field{
		key: key,
		set: func(raw string) error { *p = Secret(raw); return nil },
		get: func() (string, bool) { return "", false },
	}
}

func int64Field(key string, p *int64) field {
	return field{
		key: key,
		set: func(raw string) (err error) { *p, err = parseInt64(raw); return err },
		get: func() (string, bool) { return strconv.FormatInt(*p, 10), true },
	}
}

// durationField is a whole number of unit (time.Millisecond, time.Second).
func durationField(key string, p *time.Duration, unit time.Duration) field {
	return field{
		key: key,
		set: func(raw string) (err error) { *p, err = parseDuration(raw, unit); return err },
		get: func() (string, bool) { return strconv.FormatInt(int64(*p/unit), 10), true },
	}
}

// devicesField is load_on_devices: "*" (nil) or ';'-separated device ids.
func devicesField(key string, p *[]int) field {
	return field{
		key: key,
		set: func(raw string) (err error) { *p, err = parseDevices(raw); return err },
		get: func() (string, bool) { return formatDevices(*p), true },
	}
}

var errRange = errors.New("out of range")

func parseInt64(raw string) (int64, error) {
	n, err := strconv.ParseInt(raw, 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%s is %w", quote(raw), errRange)
	}
	if err != nil {
		return 0, fmt.Errorf("%s is not an integer", quote(raw))
	}
	return n, nil
}

func parseInt(raw string) (int, error) {
	n, err := parseInt64(raw)
	if err == nil && (n < math.MinInt || n > math.MaxInt) {
		return 0, fmt.Errorf("%s is %w", quote(raw), errRange)
	}
	return int(n), err
}

func parseBool(raw string) (bool, error) {
	switch strings.ToLower(raw) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%s is not true or false", quote(raw))
}

func parseDuration(raw string, unit time.Duration) (time.Duration, error) {
	n, err := parseInt64(raw)
	if err != nil {
		return 0, err
	}
	limit := int64(math.MaxInt64 / unit)
	if n > limit || n < -limit {
		return 0, fmt.Errorf("%s is %w", quote(raw), errRange)
	}
	return time.Duration(n) * unit, nil
}

func parseDevices(raw string) ([]int, error) {
	if raw == "*" || raw == "" {
		return nil, nil
	}
	parts := strings.Split(raw, ";")
	ids := make([]int, 0, len(parts))
	for _, part := range parts {
		id, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("%s is not \"*\" or a ';'-separated list of device ids", quote(raw))
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func formatDevices(ids []int) string {
	if ids == nil {
		return "*"
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ";")
}
