<?php declare(strict_types=1);

namespace PhpFuzz\Launcher;

/**
 * A reason vendor/bin/php-fuzz cannot run the native binary, worded for the
 * user. Its exit code is never 0 (success) nor 77 (a finding).
 *
 * @internal php-fuzz's launcher, not an API
 */
final class LauncherError extends \RuntimeException
{
    /** No binary could be found, downloaded or built. */
    public const UNAVAILABLE = 69;
    /** A downloaded archive does not match the digest shipped in the package. */
    public const DIGEST_MISMATCH = 65;
    /** The launcher was interrupted (SIGINT, SIGTERM) before the binary started. */
    public const INTERRUPTED = 130;

    public function __construct(string $message, int $exitCode = self::UNAVAILABLE)
    {
        parent::__construct($message, $exitCode);
    }

    public function exitCode(): int
    {
        return $this->getCode();
    }
}
