/**
 * Where the command's settings come from: flags, then environment variables, then a profile file,
 * then defaults; never from code.
 */
package dev.idem.cli.config;
