"""Per-player term statistics for BM25 recall (``RecallTerm``), kept by statement triggers
on the recall index: an insert adds its rows' terms (ordered, so two writers lock the same
rows in the same order), a delete takes them away from the rows that still exist (an
UPDATE, never an insert: a cascade that removed the player's statistics first leaves
nothing behind) and forgets a term no row holds any more, an update does both. The empty
term counts the rows and sums their lengths."""

import django.db.models.deletion
from django.db import migrations, models


TRIGGERS = r'''
CREATE FUNCTION memory_recall_terms_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO memory_recallterm (tenant_id, player_id, term, df, length_sum)
    SELECT tenant_id, player_id, term, sum(n), sum(l) FROM (
        SELECT r.tenant_id, r.player_id, u.lexeme AS term, 1 AS n, 0 AS l
        FROM new_rows r CROSS JOIN LATERAL unnest(r.lexemes) u
        UNION ALL
        SELECT r.tenant_id, r.player_id, '', 1, length(r.lexemes) FROM new_rows r
    ) t
    GROUP BY tenant_id, player_id, term ORDER BY tenant_id, player_id, term
    ON CONFLICT (tenant_id, player_id, term) DO UPDATE
        SET df = memory_recallterm.df + EXCLUDED.df,
            length_sum = memory_recallterm.length_sum + EXCLUDED.length_sum;
    RETURN NULL;
END $$;

CREATE FUNCTION memory_recall_terms_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH gone AS (
        SELECT tenant_id, player_id, term, sum(n) AS n, sum(l) AS l FROM (
            SELECT r.tenant_id, r.player_id, u.lexeme AS term, 1 AS n, 0 AS l
            FROM old_rows r CROSS JOIN LATERAL unnest(r.lexemes) u
            UNION ALL
            SELECT r.tenant_id, r.player_id, '', 1, length(r.lexemes) FROM old_rows r
        ) t GROUP BY tenant_id, player_id, term
    ), locked AS (
        SELECT s.id, gone.n, gone.l FROM memory_recallterm s
        JOIN gone ON s.tenant_id = gone.tenant_id AND s.player_id = gone.player_id
            AND s.term = gone.term
        ORDER BY s.tenant_id, s.player_id, s.term FOR UPDATE OF s
    )
    UPDATE memory_recallterm s SET df = s.df - locked.n, length_sum = s.length_sum - locked.l
    FROM locked WHERE s.id = locked.id;
    -- a word no row holds any more is forgotten with them
    DELETE FROM memory_recallterm s
    USING (SELECT DISTINCT r.tenant_id, r.player_id, u.lexeme AS term
           FROM old_rows r CROSS JOIN LATERAL unnest(r.lexemes) u
           UNION SELECT DISTINCT r.tenant_id, r.player_id, '' FROM old_rows r) g
    WHERE s.tenant_id = g.tenant_id AND s.player_id = g.player_id AND s.term = g.term
        AND s.df <= 0;
    RETURN NULL;
END $$;

CREATE FUNCTION memory_recall_terms_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- the same work as a delete of the old rows and an insert of the new ones
    WITH gone AS (
        SELECT tenant_id, player_id, term, sum(n) AS n, sum(l) AS l FROM (
            SELECT r.tenant_id, r.player_id, u.lexeme AS term, -1 AS n, 0 AS l
            FROM old_rows r CROSS JOIN LATERAL unnest(r.lexemes) u
            UNION ALL
            SELECT r.tenant_id, r.player_id, '', -1, -length(r.lexemes) FROM old_rows r
            UNION ALL
            SELECT r.tenant_id, r.player_id, u.lexeme, 1, 0
            FROM new_rows r CROSS JOIN LATERAL unnest(r.lexemes) u
            UNION ALL
            SELECT r.tenant_id, r.player_id, '', 1, length(r.lexemes) FROM new_rows r
        ) t GROUP BY tenant_id, player_id, term
    )
    INSERT INTO memory_recallterm (tenant_id, player_id, term, df, length_sum)
    SELECT tenant_id, player_id, term, n, l FROM gone WHERE n <> 0 OR l <> 0
    ORDER BY tenant_id, player_id, term
    ON CONFLICT (tenant_id, player_id, term) DO UPDATE
        SET df = memory_recallterm.df + EXCLUDED.df,
            length_sum = memory_recallterm.length_sum + EXCLUDED.length_sum;
    DELETE FROM memory_recallterm s
    USING (SELECT DISTINCT r.tenant_id, r.player_id, u.lexeme AS term
           FROM old_rows r CROSS JOIN LATERAL unnest(r.lexemes) u
           UNION SELECT DISTINCT r.tenant_id, r.player_id, '' FROM old_rows r) g
    WHERE s.tenant_id = g.tenant_id AND s.player_id = g.player_id AND s.term = g.term
        AND s.df <= 0;
    RETURN NULL;
END $$;

CREATE TRIGGER memory_recall_terms_insert AFTER INSERT ON memory_recallitem
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION memory_recall_terms_add();
CREATE TRIGGER memory_recall_terms_delete AFTER DELETE ON memory_recallitem
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION memory_recall_terms_remove();
CREATE TRIGGER memory_recall_terms_update AFTER UPDATE ON memory_recallitem
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION memory_recall_terms_update();

-- the rows indexed before the statistics existed
INSERT INTO memory_recallterm (tenant_id, player_id, term, df, length_sum)
SELECT tenant_id, player_id, term, sum(n), sum(l) FROM (
    SELECT r.tenant_id, r.player_id, u.lexeme AS term, 1 AS n, 0 AS l
    FROM memory_recallitem r CROSS JOIN LATERAL unnest(r.lexemes) u
    UNION ALL
    SELECT r.tenant_id, r.player_id, '', 1, length(r.lexemes) FROM memory_recallitem r
) t GROUP BY tenant_id, player_id, term;
'''

REVERSE = r'''
DROP TRIGGER IF EXISTS memory_recall_terms_insert ON memory_recallitem;
DROP TRIGGER IF EXISTS memory_recall_terms_delete ON memory_recallitem;
DROP TRIGGER IF EXISTS memory_recall_terms_update ON memory_recallitem;
DROP FUNCTION IF EXISTS memory_recall_terms_add();
DROP FUNCTION IF EXISTS memory_recall_terms_remove();
DROP FUNCTION IF EXISTS memory_recall_terms_update();
'''


class Migration(migrations.Migration):

    dependencies = [
        ('console', '0004_remove_player_persona'),
        ('memory', '0008_recall_items'),
    ]

    operations = [
        migrations.CreateModel(
            name='RecallTerm',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('term', models.TextField()),
                ('df', models.BigIntegerField(default=0)),
                ('length_sum', models.BigIntegerField(default=0)),
                ('player', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='console.player')),
                ('tenant', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='console.tenant')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('tenant', 'player', 'term'), name='recall_term_unique')],
            },
        ),
        migrations.RunSQL(TRIGGERS, REVERSE),
    ]
