// Type tests (run by `tsc --noEmit`, the package's typecheck): the published AppRouter gives a
// client exactly the server router's inputs, outputs and errors.
import type { AppRouter as ServerRouter } from '@partner/server/router';
import { createTRPCClient, httpBatchLink } from '@trpc/client';
import type { inferRouterError, inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../src/index.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectTrue = <T extends true>(value: T): T => value;

expectTrue<Equal<inferRouterInputs<AppRouter>, inferRouterInputs<ServerRouter>>>(true);
expectTrue<Equal<inferRouterOutputs<AppRouter>, inferRouterOutputs<ServerRouter>>>(true);
expectTrue<Equal<inferRouterError<AppRouter>, inferRouterError<ServerRouter>>>(true);
expectTrue<Equal<AppRouter['_def']['_config']['$types']['ctx'], object>>(true);

const client = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: 'http://localhost:3000/trpc' })] });
export async function typedCalls(): Promise<void> {
  const { merchants, pagination } = await client.merchant.list.query({ page: 1, limit: 10 });
  expectTrue<Equal<typeof pagination.hasNextPage, boolean>>(true);
  expectTrue<Equal<(typeof merchants)[number]['merchantId'], string>>(true);
  const created = await client.merchant.create.mutate({ name: 'Store' });
  expectTrue<Equal<typeof created, { merchantId: string }>>(true);
  await client.webhooks.deliveries.list.query({} as inferRouterInputs<AppRouter>['webhooks']['deliveries']['list']);
  // @ts-expect-error: not a procedure of the router
  await client.merchant.remove.mutate({ merchantId: 'x' });
  // @ts-expect-error: `name` is required
  await client.merchant.create.mutate({});
}
