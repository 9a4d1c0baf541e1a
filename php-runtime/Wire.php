<?php declare(strict_types=1);

namespace PhpFuzz;

/**
 * The pipe protocol (docs/protocol.md): frames of `u32 length` + payload,
 * payloads in bincode 2's fixed-int little-endian layout. Integers are
 * pack()ed, strings and byte vectors carry a u64 length prefix, enums a u32
 * tag, options and booleans one byte.
 */
final class Wire
{
    // Requests, engine -> harness.
    const REQ_INIT = 0;
    const REQ_RUN = 1;
    const REQ_SOURCE = 2;
    const REQ_SHUTDOWN = 3;
    const REQ_MUTATE = 4;
    const REQ_MUTATED = 5;

    // Events, harness -> engine.
    const EV_READY = 0;
    const EV_LOAD_FAILED = 1;
    const EV_SOURCE_REQUEST = 2;
    const EV_OUTCOMES = 3;
    const EV_COVERAGE_CHUNK = 4;
    const EV_DIED = 5;
    const EV_CMP_LOG = 6;
    const EV_MUTANTS = 7;
    const EV_MUTATE_REQUEST = 8;
    const EV_MUTATOR_FAILED = 9;

    // Run statuses.
    const OK = 0;
    const EXCEPTION = 1;
    const WARNING = 2;
    const TIMEOUT = 3;
    const FATAL = 4;
    const EXIT = 5;
    const OUT_OF_MEMORY = 6;

    /** @var resource */
    private $in;
    /** @var resource */
    private $out;

    /** @param resource $in @param resource $out */
    public function __construct($in, $out)
    {
        $this->in = $in;
        $this->out = $out;
    }

    public static function bytes(string $s): string
    {
        return \pack('P', \strlen($s)) . $s;
    }

    /** @param list<string> $list */
    public static function stringList(array $list): string
    {
        $out = \pack('P', \count($list));
        foreach ($list as $s) {
            $out .= \pack('P', \strlen($s)) . $s;
        }
        return $out;
    }

    /** Writes one whole frame with a single fwrite, so a signal handler never interleaves. */
    public function send(string $payload): void
    {
        $frame = \pack('V', \strlen($payload)) . $payload;
        $len = \strlen($frame);
        $written = \fwrite($this->out, $frame);
        while ($written !== false && $written < $len) {
            $more = \fwrite($this->out, \substr($frame, $written));
            if ($more === false || $more === 0) {
                $written = false;
                break;
            }
            $written += $more;
        }
        if ($written === false) {
            // The engine is gone; nothing useful is left to do.
            \posix_kill(\getmypid(), 9);
            exit(70);
        }
    }

    /** Returns the next frame's payload, or null at end of input. */
    public function receive(): ?string
    {
        $header = $this->readExactly(4);
        if ($header === null) {
            return null;
        }
        $len = \unpack('V', $header)[1];
        if ($len === 0) {
            return '';
        }
        return $this->readExactly($len);
    }

    private function readExactly(int $len): ?string
    {
        $buf = '';
        while (\strlen($buf) < $len) {
            $chunk = \fread($this->in, $len - \strlen($buf));
            if ($chunk === false || ($chunk === '' && \feof($this->in))) {
                return null;
            }
            $buf .= $chunk;
        }
        return $buf;
    }
}

/** Cursor over a received payload. */
final class WireReader
{
    /** @var string */
    private $buf;
    /** @var int */
    public $pos = 0;

    public function __construct(string $buf)
    {
        $this->buf = $buf;
    }

    public function u8(): int
    {
        return \ord($this->buf[$this->pos++]);
    }

    public function u32(): int
    {
        $v = \unpack('V', $this->buf, $this->pos)[1];
        $this->pos += 4;
        return $v;
    }

    public function u64(): int
    {
        $v = \unpack('P', $this->buf, $this->pos)[1];
        $this->pos += 8;
        return $v;
    }

    public function bytes(): string
    {
        $len = $this->u64();
        $v = \substr($this->buf, $this->pos, $len);
        $this->pos += $len;
        return $v;
    }

    /** @return list<string> */
    public function byteVectors(): array
    {
        $count = $this->u64();
        $list = [];
        $buf = $this->buf;
        $pos = $this->pos;
        for ($i = 0; $i < $count; $i++) {
            $len = \unpack('P', $buf, $pos)[1];
            $list[] = \substr($buf, $pos + 8, $len);
            $pos += 8 + $len;
        }
        $this->pos = $pos;
        return $list;
    }
}
