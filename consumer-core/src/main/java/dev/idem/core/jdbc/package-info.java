/**
 * The JDBC effect ledger: a table of applied effects, written in the same transaction as the
 * effect itself, that serves as Idem's business dedup check. DDL for PostgreSQL, MySQL and H2 is
 * shipped next to this package as {@code idem_effect-<database>.sql}.
 */
@NullMarked
package dev.idem.core.jdbc;

import org.jspecify.annotations.NullMarked;
