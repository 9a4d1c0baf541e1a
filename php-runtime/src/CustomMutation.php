<?php declare(strict_types=1);

namespace PhpFuzz;

/**
 * Applies php-fuzz's own byte mutations to $data, at most $maxLen bytes long,
 * as LLVMFuzzerMutate does: for use inside a custom mutator or crossover.
 * Deterministic for the mutator's $seed (and the number of calls before it).
 */
function mutate(string $data, int $maxLen): string
{
    return CustomMutation::builtin($data, $maxLen);
}

/** Ends a mutator call that raised a warning, notice or deprecation. */
final class MutatorWarning extends \Error
{
}

/**
 * Runs the target's custom mutator and crossover (`setCustomMutator()`,
 * `setCustomCrossOver()`) on a batch of Mutate items and sends the mutants
 * back in one Mutants event (docs/protocol.md). An exception or warning in
 * them is a MutatorFailed event: the engine stops the campaign.
 */
final class CustomMutation
{
    /** @var CustomMutation|null the instance whose item is being mutated */
    private static $current = null;

    /** @var Wire */
    private $wire;
    /** @var \Closure|null */
    private $mutator;
    /** @var \Closure|null */
    private $crossOver;
    /** @var \Closure (string $class, string $message, string $file, int $line, array $frames): string */
    private $problem;
    /** @var \Closure (\Throwable): string */
    private $throwableProblem;
    /** @var \Closure (string $payload): void keeps a request that arrived early */
    private $defer;
    /** @var int */
    private $seed = 0;
    /** @var int */
    private $calls = 0;
    /** @var string|null */
    private $warning = null;

    public function __construct(
        Wire $wire,
        ?\Closure $mutator,
        ?\Closure $crossOver,
        \Closure $problem,
        \Closure $throwableProblem,
        \Closure $defer
    ) {
        $this->wire = $wire;
        $this->mutator = $mutator;
        $this->crossOver = $crossOver;
        $this->problem = $problem;
        $this->throwableProblem = $throwableProblem;
        $this->defer = $defer;
    }

    /** Answers one Mutate request, whose tag $r has read. */
    public function run(WireReader $r): void
    {
        $count = $r->u64();
        $out = \pack('VP', Wire::EV_MUTANTS, $count);
        \set_error_handler(function (int $type, string $message, string $file, int $line): bool {
            if (!(\error_reporting() & $type)) {
                return false;
            }
            if ($this->warning === null) {
                $frames = \debug_backtrace(\DEBUG_BACKTRACE_IGNORE_ARGS);
                \array_shift($frames);
                $this->warning = ($this->problem)(ProblemText::errorName($type), $message, $file, $line, $frames);
            }
            throw new MutatorWarning($message);
        });
        self::$current = $this;
        $failure = null;
        try {
            for ($i = 0; $i < $count && $failure === null; $i++) {
                $crossOver = $r->u8() === 1;
                $this->seed = $r->u32();
                $this->calls = 0;
                $maxLen = $r->u64();
                $data = $r->bytes();
                $partner = $r->bytes();
                $this->warning = null;
                $callable = $crossOver ? $this->crossOver : $this->mutator;
                try {
                    $mutant = $crossOver
                        ? $callable($data, $partner, $maxLen, $this->seed)
                        : $callable($data, $maxLen, $this->seed);
                    if (!\is_string($mutant)) {
                        $which = $crossOver ? 'custom crossover' : 'custom mutator';
                        $where = new \ReflectionFunction($callable);
                        $failure = ($this->problem)(
                            'TypeError',
                            "the $which returned " . \get_debug_type($mutant) . ', not a string',
                            (string) $where->getFileName(),
                            (int) $where->getStartLine(),
                            []
                        );
                        break;
                    }
                } catch (\Throwable $e) {
                    $failure = $this->warning ?? ($this->throwableProblem)($e);
                    break;
                }
                if ($this->warning !== null) {
                    $failure = $this->warning;
                    break;
                }
                $out .= Wire::bytes(\strlen($mutant) > $maxLen ? \substr($mutant, 0, $maxLen) : $mutant);
            }
        } finally {
            self::$current = null;
            \restore_error_handler();
            // The mutator's own coverage is not the target's.
            FuzzingContext::reset();
        }
        $this->wire->send($failure === null ? $out : \pack('V', Wire::EV_MUTATOR_FAILED) . $failure);
    }

    public static function builtin(string $data, int $maxLen): string
    {
        $self = self::$current;
        if ($self === null) {
            throw new \LogicException('\PhpFuzz\mutate() works only inside a custom mutator or crossover, while php-fuzz fuzzes');
        }
        if ($maxLen < 0) {
            throw new \InvalidArgumentException("\\PhpFuzz\\mutate(): negative maxLen $maxLen");
        }
        $self->wire->send(\pack('VVVP', Wire::EV_MUTATE_REQUEST, $self->seed, $self->calls++, $maxLen) . Wire::bytes($data));
        while (true) {
            $reply = $self->wire->receive();
            if ($reply === null) {
                exit(70);
            }
            $r = new WireReader($reply);
            if ($r->u32() === Wire::REQ_MUTATED) {
                return $r->bytes();
            }
            ($self->defer)($reply);
        }
    }
}
