-- Idem's effect ledger (MySQL 8, InnoDB). One row per applied effect, written in the handler's
-- own transaction. Column sizes keep the utf8mb4 primary key within InnoDB's 3072-byte limit:
-- (128 + 128 + 512) characters x 4 bytes.
create table if not exists idem_effect (
    consumer_group  varchar(128) not null,
    topic           varchar(128) not null,
    idempotency_key varchar(512) not null,
    fence           bigint       not null,
    applied_at      timestamp(3) not null,
    primary key (consumer_group, topic, idempotency_key),
    index idem_effect_applied_at (applied_at)
) engine = InnoDB default charset = utf8mb4;
