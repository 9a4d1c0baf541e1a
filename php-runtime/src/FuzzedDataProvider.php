<?php declare(strict_types=1);

namespace PhpFuzz;

/**
 * Splits one fuzz input into typed values, by the rules of LLVM's
 * FuzzedDataProvider.h, so what users of libFuzzer, Atheris and Jazzer know
 * carries over: integers, booleans, floats and picks come from the END of
 * the data, bytes and strings from the FRONT. When the data runs out, the
 * integer methods return their minimum and the byte methods return less.
 *
 * PHP integers are signed 64-bit; the unsigned arithmetic LLVM does on
 * uint64_t is done here on the same bit patterns (see the private helpers).
 */
final class FuzzedDataProvider
{
    /** @var string */
    private $data;
    /** @var int offset of the first unconsumed byte */
    private $front = 0;
    /** @var int offset just past the last unconsumed byte */
    private $back;

    public function __construct(string $data)
    {
        $this->data = $data;
        $this->back = \strlen($data);
    }

    public function remainingBytes(): int
    {
        return $this->back - $this->front;
    }

    /** One byte from the end; its lowest bit. */
    public function consumeBool(): bool
    {
        return ($this->consumeIntInRangeBits(0, 255) & 1) === 1;
    }

    /**
     * An integer in [$min, $max]: LLVM's ConsumeIntegralInRange<int64_t>.
     * Takes bytes from the end, one per 8 bits of the range, the last byte
     * of the data being the most significant, then reduces modulo range + 1.
     */
    public function consumeInt(int $min = \PHP_INT_MIN, int $max = \PHP_INT_MAX): int
    {
        if ($min > $max) {
            throw new \InvalidArgumentException("consumeInt(): min $min is greater than max $max");
        }
        return $this->consumeIntInRangeBits($min, $max);
    }

    /** A float in [0, 1]: eight bytes from the end as a uint64, divided by 2^64 - 1. */
    public function consumeProbability(): float
    {
        // The range [0, 2^64 - 1] is -1 as a bit pattern: eight bytes, no modulo.
        $bits = $this->consumeIntInRangeBits(0, -1);
        $high = ($bits >> 32) & 0xFFFFFFFF;
        $low = $bits & 0xFFFFFFFF;
        return ($high * 4294967296.0 + $low) / 18446744073709551615.0;
    }

    /** A float in [$min, $max]: LLVM's ConsumeFloatingPointInRange<double>. */
    public function consumeFloat(float $min, float $max): float
    {
        if (!($min <= $max)) {
            throw new \InvalidArgumentException("consumeFloat(): min $min is greater than max $max");
        }
        $result = $min;
        if ($max > 0.0 && $min < 0.0 && $max > $min + \PHP_FLOAT_MAX) {
            // The range does not fit in a double: halve it, and a bool picks the half.
            $range = $max / 2.0 - $min / 2.0;
            if ($this->consumeBool()) {
                $result += $range;
            }
        } else {
            $range = $max - $min;
        }
        return $result + $range * $this->consumeProbability();
    }

    /** Up to $maxLength bytes from the front (fewer only if the data runs out). */
    public function consumeBytes(int $maxLength): string
    {
        if ($maxLength < 0) {
            throw new \InvalidArgumentException("consumeBytes(): negative length $maxLength");
        }
        $n = \min($maxLength, $this->remainingBytes());
        $bytes = (string) \substr($this->data, $this->front, $n);
        $this->front += $n;
        return $bytes;
    }

    /**
     * A string of at most $maxLength bytes from the front, its length chosen
     * by the data: LLVM's ConsumeRandomLengthString. A backslash followed by
     * another backslash is one backslash; a backslash followed by any other
     * byte ends the string (both are consumed). Bytes that are not part of a
     * valid UTF-8 sequence are then replaced by their low seven bits, so the
     * result is valid UTF-8 of the same length.
     */
    public function consumeString(int $maxLength): string
    {
        if ($maxLength < 0) {
            throw new \InvalidArgumentException("consumeString(): negative length $maxLength");
        }
        $out = '';
        $data = $this->data;
        for ($i = 0; $i < $maxLength && $this->front < $this->back; $i++) {
            $next = $data[$this->front++];
            if ($next === '\\' && $this->front < $this->back) {
                $next = $data[$this->front++];
                if ($next !== '\\') {
                    break;
                }
            }
            $out .= $next;
        }
        return self::toUtf8($out);
    }

    public function consumeRemainingBytes(): string
    {
        return $this->consumeBytes($this->remainingBytes());
    }

    /**
     * One of $values (in their array order, keys ignored): the index is
     * consumeInt(0, count - 1).
     *
     * @param array<mixed> $values
     * @return mixed
     */
    public function pickValue(array $values)
    {
        if ($values === []) {
            throw new \InvalidArgumentException('pickValue(): empty array');
        }
        $values = \array_values($values);
        return $values[$this->consumeIntInRangeBits(0, \count($values) - 1)];
    }

    /** ConsumeIntegralInRange on 64-bit patterns: [$min, $max] read as signed, or as unsigned by the caller. */
    private function consumeIntInRangeBits(int $min, int $max): int
    {
        $range = self::wrappingSub($max, $min);
        $result = 0;
        $offset = 0;
        // ($range >> $offset) !== 0 is the unsigned test: an arithmetic shift
        // of a top-bit-set value is nonzero, as the logical shift is.
        while ($offset < 64 && ($range >> $offset) !== 0 && $this->back > $this->front) {
            $this->back--;
            $result = ($result << 8) | \ord($this->data[$this->back]);
            $offset += 8;
        }
        if ($range !== -1) {
            $result = self::unsignedRemainder($result, $range + 1);
        }
        return self::wrappingAdd($min, $result);
    }

    private static function wrappingSub(int $a, int $b): int
    {
        return self::wrappingAdd(self::wrappingAdd($a, ~$b), 1);
    }

    private static function wrappingAdd(int $a, int $b): int
    {
        $low = ($a & 0xFFFFFFFF) + ($b & 0xFFFFFFFF);
        $high = (($a >> 32) & 0xFFFFFFFF) + (($b >> 32) & 0xFFFFFFFF) + ($low >> 32);
        return (($high & 0xFFFFFFFF) << 32) | ($low & 0xFFFFFFFF);
    }

    private static function unsignedLess(int $a, int $b): bool
    {
        return ($a ^ \PHP_INT_MIN) < ($b ^ \PHP_INT_MIN);
    }

    /** $a mod $m, both read as uint64; $m is not 0. */
    private static function unsignedRemainder(int $a, int $m): int
    {
        if (self::unsignedLess($a, $m)) {
            return $a;
        }
        if ($m < 0) {
            // $m >= 2^63 > $a / 2, so one subtraction is enough.
            return self::wrappingSub($a, $m);
        }
        if ($a >= 0) {
            return $a % $m;
        }
        // $a >= 2^63: reduce floor($a / 2), then put the last bit back.
        $twice = ((((($a >> 1) & \PHP_INT_MAX) % $m) << 1) | ($a & 1));
        return self::unsignedLess($twice, $m) ? $twice : self::wrappingSub($twice, $m);
    }

    /** Replaces each byte that is not part of a valid UTF-8 sequence by its low seven bits. */
    private static function toUtf8(string $s): string
    {
        if (\preg_match('//u', $s) === 1) {
            return $s;
        }
        $out = '';
        $n = \strlen($s);
        $i = 0;
        while ($i < $n) {
            $len = self::utf8SequenceLength($s, $i, $n);
            if ($len === 0) {
                $out .= \chr(\ord($s[$i]) & 0x7F);
                $i++;
            } else {
                $out .= \substr($s, $i, $len);
                $i += $len;
            }
        }
        return $out;
    }

    /** Length of the valid UTF-8 sequence starting at $i, or 0 (RFC 3629: no overlongs, no surrogates). */
    private static function utf8SequenceLength(string $s, int $i, int $n): int
    {
        $b = \ord($s[$i]);
        if ($b < 0x80) {
            return 1;
        }
        if ($b >= 0xC2 && $b <= 0xDF) {
            $len = 2;
            $lo = 0x80;
            $hi = 0xBF;
        } elseif ($b >= 0xE0 && $b <= 0xEF) {
            $len = 3;
            $lo = $b === 0xE0 ? 0xA0 : 0x80;
            $hi = $b === 0xED ? 0x9F : 0xBF;
        } elseif ($b >= 0xF0 && $b <= 0xF4) {
            $len = 4;
            $lo = $b === 0xF0 ? 0x90 : 0x80;
            $hi = $b === 0xF4 ? 0x8F : 0xBF;
        } else {
            return 0;
        }
        if ($i + $len > $n) {
            return 0;
        }
        $second = \ord($s[$i + 1]);
        if ($second < $lo || $second > $hi) {
            return 0;
        }
        for ($k = 2; $k < $len; $k++) {
            $c = \ord($s[$i + $k]);
            if ($c < 0x80 || $c > 0xBF) {
                return 0;
            }
        }
        return $len;
    }
}
