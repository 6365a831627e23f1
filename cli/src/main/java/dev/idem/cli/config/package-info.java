/**
 * Where the command's settings come from: flags, then environment variables, then a profile file,
 * then defaults; never from code.
 */
@NullMarked
package dev.idem.cli.config;

import org.jspecify.annotations.NullMarked;
