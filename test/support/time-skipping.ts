import { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../../src/config';
import { timeSkippingServerPath } from '../../src/infra/tools';

type DataConverter = NonNullable<NonNullable<Parameters<typeof TestWorkflowEnvironment.createTimeSkipping>[0]>['client']>['dataConverter'];

/**
 * The time-skipping test server from the project's own tools (never a download), with the
 * ownership search attributes registered: the test server starts with none, the dev server
 * with ours (scripts/setup.sh, src/infra/temporal-dev-server.ts).
 */
export async function startTimeSkipping(dataConverter: DataConverter): Promise<TestWorkflowEnvironment> {
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: timeSkippingServerPath() } },
    client: { dataConverter },
  });
  await env.connection.operatorService.addSearchAttributes({
    namespace: 'default',
    searchAttributes: Object.fromEntries(
      Object.entries(SEARCH_ATTRIBUTES).map(([k, type]) => [
        k,
        type === 'KeywordList'
          ? temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST
          : temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
      ]),
    ),
  });
  return env;
}
