<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * A "php-fuzz arguments v1" entry that does not parse. The message is
 * `LINE:COLUMN: what was expected`; callers that know the file prefix it
 * with `FILE:`. Lines are 1-based in the file (the header is line 1);
 * columns are 1-based byte offsets in the line.
 */
final class EntryError extends \RuntimeException
{
    public function __construct(
        /** what was expected, or what is wrong, without the position */
        public readonly string $detail,
        public readonly int $entryLine,
        public readonly int $column,
    ) {
        parent::__construct("{$entryLine}:{$column}: {$detail}");
    }
}
