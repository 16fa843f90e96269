import { createErasure } from '../../features/erasures/create-erasure.js';
import { partnerProcedure } from '../procedures.js';
import { createErasureMeta, ZCreateErasureRequest, ZCreateErasureResponse } from './create.types.js';

export const createErasureRoute = partnerProcedure
  .meta(createErasureMeta)
  .input(ZCreateErasureRequest)
  .output(ZCreateErasureResponse)
  .mutation(({ ctx, input }) => createErasure(ctx.db, ctx.partner, input));
