import { getErasure } from '../../features/erasures/get-erasure.js';
import { partnerProcedure } from '../procedures.js';
import { getErasureMeta, ZGetErasureRequest, ZGetErasureResponse } from './get.types.js';

export const getErasureRoute = partnerProcedure
  .meta(getErasureMeta)
  .input(ZGetErasureRequest)
  .output(ZGetErasureResponse)
  .query(({ ctx, input }) => getErasure(ctx.db, ctx.partner, input.erasureId));
