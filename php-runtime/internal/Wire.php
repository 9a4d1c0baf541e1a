<?php declare(strict_types=1);

namespace PhpFuzz;

/**
 * The pipe protocol (docs/protocol.md): frames of a 12-byte header (magic,
 * sequence number, payload length, each a little-endian u32) and a payload
 * in bincode 2's fixed-int little-endian layout. Integers are pack()ed,
 * strings and byte vectors carry a u64 length prefix, enums a u32 tag,
 * options and booleans one byte.
 *
 * @internal php-fuzz's harness, not an API
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
    const REQ_FORK_SERVER = 6;
    const REQ_FORK = 7;

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
    const EV_FORK_SERVING = 10;
    const EV_FORKED = 11;
    const EV_STARTED = 12;
    const EV_STUCK = 13;

    // Run statuses.
    const OK = 0;
    const EXCEPTION = 1;
    const WARNING = 2;
    const TIMEOUT = 3;
    const FATAL = 4;
    const EXIT = 5;
    const OUT_OF_MEMORY = 6;
    const STACK_OVERFLOW = 7;
    /** A bug detector's finding (docs/detectors.md). */
    const SECURITY = 8;
    /** A side effect php-fuzz refused; the run went on. */
    const SIDE_EFFECT = 9;

    /** First four bytes of every frame: "\xF5pf\x02" (0xF5 never occurs in UTF-8 text). */
    const MAGIC = 0x026670F5;
    const HEADER_BYTES = 12;
    /** Exit status of a harness whose request stream lost its framing. */
    const EXIT_OUT_OF_SYNC = 71;
    /**
     * Descriptors below this are left to the target: the harness's own
     * duplicates of the pipes land above it (see open()).
     */
    const FIRST_PRIVATE_FD = 64;

    /** @var resource */
    private $in;
    /** @var resource */
    private $out;
    /** @var int */
    private $inFd;
    /** @var int */
    private $outFd;
    /** @var int sequence number of the next frame sent */
    private $sent = 0;
    /** @var int sequence number expected of the next frame received */
    private $received = 0;
    /** @var bool a frame is being written: signal handlers must not write now */
    private $sending = false;

    /**
     * @param resource $in
     * @param resource $out
     */
    private function __construct(int $inFd, int $outFd, $in, $out)
    {
        $this->inFd = $inFd;
        $this->outFd = $outFd;
        $this->in = $in;
        $this->out = $out;
    }

    /** Opens the pipes the engine passed as descriptors $inFd and $outFd, or returns null. */
    public static function open(int $inFd, int $outFd): ?self
    {
        try {
            return new self($inFd, $outFd, self::openFd("php://fd/$inFd", 'rb'), self::openFd("php://fd/$outFd", 'wb'));
        } catch (\RuntimeException $e) {
            return null;
        }
    }

    /**
     * Opens the pipes of a forked harness (docs/protocol.md, "The fork
     * server"): named pipes the engine made for it. Once open, they are
     * this process's descriptors, found by the path they name, so a stream
     * the target closes can be reopened as in open().
     */
    public static function openForked(string $inPath, string $outPath): ?self
    {
        $inPath = (string) \realpath($inPath);
        $outPath = (string) \realpath($outPath);
        try {
            $in = self::openFd($inPath, 'rb');
            $out = self::openFd($outPath, 'wb');
        } catch (\RuntimeException $e) {
            return null;
        }
        $inFd = self::unownedCopy(self::ownDescriptor($inPath));
        $outFd = self::unownedCopy(self::ownDescriptor($outPath));
        return new self($inFd, $outFd, $in, $out);
    }

    /**
     * A copy of descriptor $fd above 64 that no PHP stream owns, as the
     * engine's descriptors are in a plain harness: a target that closes
     * every stream (get_resources()) cannot close it, so the harness
     * reopens its stream from it, and the engine sees no end of file. Needs
     * FFI (on in the CLI by default); without it, $fd itself.
     */
    private static function unownedCopy(int $fd): int
    {
        if ($fd < 0 || !\extension_loaded('ffi')) {
            return $fd;
        }
        try {
            $libc = \FFI::cdef('int fcntl(int fd, int cmd, ...);');
            // F_DUPFD (0): the lowest free descriptor from FIRST_PRIVATE_FD on.
            $copy = $libc->fcntl($fd, 0, self::FIRST_PRIVATE_FD);
        } catch (\Throwable $e) {
            return $fd;
        }
        return \is_int($copy) && $copy >= 0 ? $copy : $fd;
    }

    /** The lowest private descriptor of this process open on $path, else -1. */
    private static function ownDescriptor(string $path): int
    {
        foreach (@\scandir('/proc/self/fd') ?: [] as $fd) {
            if ((int) $fd >= self::FIRST_PRIVATE_FD && @\readlink("/proc/self/fd/$fd") === $path) {
                return (int) $fd;
            }
        }
        return -1;
    }

    /** Closes this process's streams of the pipes (a forked harness drops the fork server's). */
    public function close(): void
    {
        foreach ([$this->in, $this->out] as $stream) {
            if (\is_resource($stream)) {
                \fclose($stream);
            }
        }
    }

    /**
     * php://fd/N opens a dup() of N, which takes the lowest free descriptor.
     * Fillers hold the low ones meanwhile, so the harness's streams end up
     * where a target poking at php://fd/3, 4, 5… does not find them.
     *
     * @return resource
     */
    private static function openFd(string $path, string $mode)
    {
        $fillers = [];
        for ($i = 3; $i < self::FIRST_PRIVATE_FD; $i++) {
            $filler = @\fopen('/dev/null', 'rb');
            if ($filler === false) {
                break;
            }
            $fillers[] = $filler;
        }
        $stream = @\fopen($path, $mode);
        foreach ($fillers as $filler) {
            \fclose($filler);
        }
        if ($stream === false) {
            throw new \RuntimeException("$path cannot be opened");
        }
        \stream_set_read_buffer($stream, 0);
        \stream_set_write_buffer($stream, 0);
        return $stream;
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

    /**
     * Waits until the request pipe has bytes to read. A signal cuts a
     * select() short, never a read (handlers restart it), so a process that
     * waits here runs its signal handlers at once (the fork server does).
     */
    public function awaitInput(): void
    {
        do {
            $read = [$this->in];
            $write = $except = null;
        } while (\is_resource($this->in) && @\stream_select($read, $write, $except, null) === false);
    }

    /** True while a frame is being written. */
    public function busy(): bool
    {
        return $this->sending;
    }

    /**
     * Writes one frame: $head, then $tail (a large trace goes out without
     * being copied). Signal handlers check busy() and wait, so nothing else
     * is written in between.
     */
    public function send(string $head, string $tail = ''): void
    {
        $this->sending = true;
        $header = \pack('VVV', self::MAGIC, $this->sent, \strlen($head) + \strlen($tail));
        $this->sent = ($this->sent + 1) & 0xFFFFFFFF;
        $ok = $this->write($header . $head) && ($tail === '' || $this->write($tail));
        $this->sending = false;
        if (!$ok) {
            // The engine is gone; nothing useful is left to do.
            \posix_kill(\getmypid(), 9);
            exit(70);
        }
    }

    private function write(string $bytes): bool
    {
        if (!\is_resource($this->out)) {
            // The target closed the harness's stream; the descriptor is still ours.
            $this->out = self::openFd("php://fd/{$this->outFd}", 'wb');
        }
        $len = \strlen($bytes);
        $written = @\fwrite($this->out, $bytes);
        while ($written !== false && $written < $len) {
            $more = @\fwrite($this->out, \substr($bytes, $written));
            if ($more === false || $more === 0) {
                return false;
            }
            $written += $more;
        }
        return $written !== false;
    }

    /**
     * Returns the next frame's payload, or null at end of input. A frame
     * that does not start with the magic and the expected sequence number
     * means something else read from the request pipe: the harness cannot
     * go on, and says so on stderr.
     */
    public function receive(): ?string
    {
        $header = $this->readExactly(self::HEADER_BYTES);
        if ($header === null) {
            return null;
        }
        $h = \unpack('Vmagic/Vseq/Vlen', $header);
        if ($h['magic'] !== self::MAGIC || $h['seq'] !== $this->received) {
            \fwrite(\STDERR, \sprintf(
                "php-fuzz harness: the request stream is out of sync (frame %d expected, got %s): did the target read from descriptor %d?\n",
                $this->received,
                \bin2hex($header),
                $this->inFd
            ));
            exit(self::EXIT_OUT_OF_SYNC);
        }
        $this->received = ($this->received + 1) & 0xFFFFFFFF;
        if ($h['len'] === 0) {
            return '';
        }
        return $this->readExactly($h['len']);
    }

    private function readExactly(int $len): ?string
    {
        $buf = '';
        while (\strlen($buf) < $len) {
            if (!\is_resource($this->in)) {
                $this->in = self::openFd("php://fd/{$this->inFd}", 'rb');
            }
            $chunk = @\fread($this->in, $len - \strlen($buf));
            if ($chunk === false || ($chunk === '' && \feof($this->in))) {
                return null;
            }
            if ($chunk === '') {
                // A target made the pipe non-blocking (a forked harness shares
                // the fork server's): wait for bytes rather than spin.
                \stream_set_blocking($this->in, true);
            }
            $buf .= $chunk;
        }
        return $buf;
    }
}

/**
 * Cursor over a received payload.
 *
 * @internal php-fuzz's harness, not an API
 */
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
